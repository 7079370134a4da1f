// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink attribute encoding and checked decoding (crdbg/nla.h).
 */
#include <errno.h>
#include <string.h>

#include <linux/genetlink.h>

#include <crdbg/nla.h>

bool crdbg_nla_ok(const struct nlattr *a, size_t rem)
{
	return rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
}

const struct nlattr *crdbg_nla_next(const struct nlattr *a, size_t *rem)
{
	size_t step = NLA_ALIGN(a->nla_len);

	/* the last attribute's padding may be missing: nothing follows it */
	step = step < *rem ? step : *rem;
	*rem -= step;
	return (const struct nlattr *)((const char *)a + step);
}

static bool obeys(const struct nlattr *a, const struct crdbg_nla_policy *p)
{
	size_t len = crdbg_nla_len(a);

	if (len < p->min_len)
		return false;
	switch (p->kind) {
	case CRDBG_NLA_U16:
		return len >= sizeof(uint16_t);
	case CRDBG_NLA_U32:
		return len >= sizeof(uint32_t);
	case CRDBG_NLA_U64:
		return len >= sizeof(uint64_t);
	case CRDBG_NLA_STRING:
		return len > 0 && memchr(crdbg_nla_data(a), '\0', len);
	case CRDBG_NLA_NESTED:
	case CRDBG_NLA_ANY:
		return true;
	}
	return false;
}

int crdbg_nla_parse(const struct nlattr **tb, int max, const void *data, size_t len,
		    const struct crdbg_nla_policy *policy)
{
	const struct nlattr *a = data;

	memset(tb, 0, (size_t)(max + 1) * sizeof(*tb));
	while (len >= NLA_HDRLEN) {
		int type;

		if (!crdbg_nla_ok(a, len))
			return -EPROTO;
		type = a->nla_type & NLA_TYPE_MASK;
		if (type <= max) {
			if (policy && !obeys(a, &policy[type]))
				return -EPROTO;
			tb[type] = a;
		}
		a = crdbg_nla_next(a, &len);
	}
	return 0;
}

int crdbg_nla_parse_nested(const struct nlattr **tb, int max, const struct nlattr *nest,
			   const struct crdbg_nla_policy *policy)
{
	return crdbg_nla_parse(tb, max, crdbg_nla_data(nest), crdbg_nla_len(nest), policy);
}

/* memcpy: an attribute's payload is 4-byte aligned, a u64 need not be 8 */
uint16_t crdbg_nla_u16(const struct nlattr *a)
{
	uint16_t v;

	memcpy(&v, crdbg_nla_data(a), sizeof(v));
	return v;
}

uint32_t crdbg_nla_u32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, crdbg_nla_data(a), sizeof(v));
	return v;
}

uint64_t crdbg_nla_u64(const struct nlattr *a)
{
	uint64_t v;

	memcpy(&v, crdbg_nla_data(a), sizeof(v));
	return v;
}

const char *crdbg_nla_string(const struct nlattr *a)
{
	return crdbg_nla_data(a);
}

void crdbg_nla_request_init(struct crdbg_nla_request *r, uint16_t family, uint8_t cmd,
			    uint8_t version, uint16_t flags)
{
	struct genlmsghdr *g = (struct genlmsghdr *)(r->buf + NLMSG_HDRLEN);

	memset(r, 0, sizeof(*r));
	r->hdr.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	r->hdr.nlmsg_type = family;
	r->hdr.nlmsg_flags = NLM_F_REQUEST | flags;
	g->cmd = cmd;
	g->version = version;
}

void crdbg_nla_put(struct crdbg_nla_request *r, uint16_t type, const void *data, size_t len)
{
	size_t at = NLMSG_ALIGN(r->hdr.nlmsg_len);
	struct nlattr *a = (struct nlattr *)(r->buf + at);

	if (r->overflow || len > UINT16_MAX - NLA_HDRLEN ||
	    at + NLA_ALIGN(NLA_HDRLEN + len) > sizeof(r->buf)) {
		r->overflow = true;
		return;
	}
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(a->nla_len) - a->nla_len);
	r->hdr.nlmsg_len = (uint32_t)(at + NLA_ALIGN(a->nla_len));
}

void crdbg_nla_put_u32(struct crdbg_nla_request *r, uint16_t type, uint32_t v)
{
	crdbg_nla_put(r, type, &v, sizeof(v));
}

void crdbg_nla_put_u64(struct crdbg_nla_request *r, uint16_t type, uint64_t v)
{
	crdbg_nla_put(r, type, &v, sizeof(v));
}

void crdbg_nla_put_string(struct crdbg_nla_request *r, uint16_t type, const char *s)
{
	crdbg_nla_put(r, type, s, strlen(s) + 1);
}

const char *crdbg_nla_extack_text(const struct nlmsghdr *h, size_t len)
{
	static const struct crdbg_nla_policy policy[NLMSGERR_ATTR_MAX + 1] = {
		[NLMSGERR_ATTR_MSG] = { .kind = CRDBG_NLA_STRING },
	};
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t at = NLMSG_HDRLEN + sizeof(*e);

	if (len > h->nlmsg_len)
		len = h->nlmsg_len;
	if (len < at || !(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	/* the request comes back after the header unless the ack is capped */
	if (!(h->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(e->msg) ||
		    e->msg.nlmsg_len - sizeof(e->msg) > len - at)
			return NULL;
		at += NLMSG_ALIGN(e->msg.nlmsg_len - sizeof(e->msg));
	}
	if (at >= len ||
	    crdbg_nla_parse(tb, NLMSGERR_ATTR_MAX, (const char *)h + at, len - at, policy) ||
	    !tb[NLMSGERR_ATTR_MSG])
		return NULL;
	return crdbg_nla_string(tb[NLMSGERR_ATTR_MSG]);
}
