/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Netlink attributes, encoded into a request and decoded from a reply
 * with every length checked against where it lies. No library: crdbg
 * talks to one family with a dozen attributes (<linux/crdbg.h>), and
 * libnl cost every crdbg command two more libraries to load.
 */
#ifndef CRDBG_NLA_H
#define CRDBG_NLA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

/* What an attribute's payload must be for a parse to accept it. */
enum crdbg_nla_kind {
	CRDBG_NLA_ANY,		/* anything, min_len bytes at least */
	CRDBG_NLA_U16,
	CRDBG_NLA_U32,
	CRDBG_NLA_U64,
	CRDBG_NLA_STRING,	/* NUL-terminated inside the payload */
	CRDBG_NLA_NESTED,	/* attributes, checked when parsed */
};

struct crdbg_nla_policy {
	enum crdbg_nla_kind kind;
	uint16_t min_len;
};

/*
 * Index the attributes in data[0..len) by type into tb[0..max]: 0, or
 * -EPROTO for an attribute that overruns the data or breaks policy
 * (indexed by type, NULL for none); types above max are skipped.
 */
int crdbg_nla_parse(const struct nlattr **tb, int max, const void *data, size_t len,
		    const struct crdbg_nla_policy *policy);
int crdbg_nla_parse_nested(const struct nlattr **tb, int max, const struct nlattr *nest,
			   const struct crdbg_nla_policy *policy);

static inline const void *crdbg_nla_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static inline size_t crdbg_nla_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/* Payload readers for attributes a parse's policy checked. */
uint16_t crdbg_nla_u16(const struct nlattr *a);
uint32_t crdbg_nla_u32(const struct nlattr *a);
uint64_t crdbg_nla_u64(const struct nlattr *a);
const char *crdbg_nla_string(const struct nlattr *a);

/* Whether a whole attribute starts at a with rem bytes left. */
bool crdbg_nla_ok(const struct nlattr *a, size_t rem);
const struct nlattr *crdbg_nla_next(const struct nlattr *a, size_t *rem);

/* Each attribute inside nest, while one fits; a parse checks it. */
#define crdbg_nla_for_each_nested(pos, nest, rem)                                     \
	for ((pos) = crdbg_nla_data(nest), (rem) = crdbg_nla_len(nest);               \
	     crdbg_nla_ok((pos), (rem)); (pos) = crdbg_nla_next((pos), &(rem)))

/*
 * A request being built: a netlink header, a generic netlink header and
 * attributes. A put that does not fit marks it overflowed, and sending
 * it is then refused.
 */
#define CRDBG_NLA_REQUEST_MAX 512

struct crdbg_nla_request {
	union {
		struct nlmsghdr hdr;
		char buf[CRDBG_NLA_REQUEST_MAX];
	};
	bool overflow;
};

void crdbg_nla_request_init(struct crdbg_nla_request *r, uint16_t family, uint8_t cmd,
			    uint8_t version, uint16_t flags);
void crdbg_nla_put(struct crdbg_nla_request *r, uint16_t type, const void *data, size_t len);
void crdbg_nla_put_u32(struct crdbg_nla_request *r, uint16_t type, uint32_t v);
void crdbg_nla_put_u64(struct crdbg_nla_request *r, uint16_t type, uint64_t v);
void crdbg_nla_put_string(struct crdbg_nla_request *r, uint16_t type, const char *s);

/*
 * The text of an extended ack's NLMSGERR_ATTR_MSG in an NLMSG_ERROR
 * message h (len bytes received from it on), or NULL.
 */
const char *crdbg_nla_extack_text(const struct nlmsghdr *h, size_t len);

#endif /* CRDBG_NLA_H */
