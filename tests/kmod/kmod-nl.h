/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A raw generic netlink client for the crdbg.ko tests that need the bytes
 * of a request (to hand them to another writer) or a socket of their own:
 * resolve the family, build a request, send it, read its ack and extack.
 */
#ifndef CRDBG_KMOD_NL_H
#define CRDBG_KMOD_NL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/crdbg.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct knl {
	int fd;
	uint16_t family;
	uint32_t seq;
	char msg[256];		/* extack text of the last error, "" if none */
};

struct knl_msg {
	unsigned char buf[512];
	size_t len;
};

static inline void knl_start_type(struct knl_msg *m, uint16_t type, uint8_t cmd, uint8_t version,
				  uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = seq;
	g->cmd = cmd;
	g->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	nlh->nlmsg_len = (uint32_t)m->len;
}

static inline void knl_put(struct knl_msg *m, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);

	if (m->len + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(m->buf))
		return;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	m->len += NLA_HDRLEN + NLA_ALIGN(len);
	((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

static inline void knl_u32(struct knl_msg *m, uint16_t type, uint32_t v)
{
	knl_put(m, type, &v, sizeof(v));
}

static inline void knl_u64(struct knl_msg *m, uint16_t type, uint64_t v)
{
	knl_put(m, type, &v, sizeof(v));
}

/* A crdbg request on @k (with the next sequence number). */
static inline void knl_start(struct knl *k, struct knl_msg *m, uint8_t cmd)
{
	knl_start_type(m, k->family, cmd, CRDBG_GENL_VERSION, 0, ++k->seq);
}

/*
 * Read answers until the ack of sequence @seq (any, if 0): its error (0 or
 * a negative errno), the extack text in k->msg; @ret_replies counts the
 * other messages. -ETIMEDOUT if none comes within the socket's timeout.
 */
static inline int knl_ack(struct knl *k, uint32_t seq, int *ret_replies)
{
	static unsigned char rbuf[65536];
	int replies = 0;

	k->msg[0] = 0;
	for (;;) {
		ssize_t n = recv(k->fd, rbuf, sizeof(rbuf), 0);
		struct nlmsghdr *h;
		int rem = (int)n;

		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			struct nlmsgerr *e = NLMSG_DATA(h);
			struct nlattr *a = (struct nlattr *)(e + 1);
			int alen = (int)h->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(*e);

			if (h->nlmsg_type == NLMSG_DONE && (!seq || h->nlmsg_seq == seq)) {
				if (ret_replies)
					*ret_replies = replies;
				return 0;	/* the end of a dump, which has no ack */
			}
			if (h->nlmsg_type != NLMSG_ERROR || (seq && h->nlmsg_seq != seq)) {
				replies++;
				continue;
			}
			if (e->error && !(h->nlmsg_flags & NLM_F_CAPPED))
				alen -= (int)e->msg.nlmsg_len - NLMSG_HDRLEN;
			a = (struct nlattr *)((char *)h + h->nlmsg_len - alen);
			while ((h->nlmsg_flags & NLM_F_ACK_TLVS) && alen >= NLA_HDRLEN &&
			       a->nla_len >= NLA_HDRLEN && a->nla_len <= alen) {
				if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
					snprintf(k->msg, sizeof(k->msg), "%.*s",
						 a->nla_len - NLA_HDRLEN, (char *)a + NLA_HDRLEN);
				alen -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
			}
			if (ret_replies)
				*ret_replies = replies;
			return e->error;
		}
	}
}

static inline int knl_send(int fd, const struct knl_msg *m)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	return sendto(fd, m->buf, m->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0 ?
	       -errno : 0;
}

static inline int knl_xact(struct knl *k, struct knl_msg *m)
{
	int ret = knl_send(k->fd, m);

	return ret < 0 ? ret : knl_ack(k, ((struct nlmsghdr *)m->buf)->nlmsg_seq, NULL);
}

/* Open a socket and resolve the crdbg family: 0 or a negative errno. */
static inline int knl_open(struct knl *k)
{
	struct timeval tv = { .tv_sec = 10 };
	static unsigned char rbuf[8192];
	struct knl_msg m;
	int one = 1, rem;
	struct nlmsghdr *h;
	ssize_t n;

	memset(k, 0, sizeof(*k));
	k->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (k->fd < 0)
		return -errno;
	setsockopt(k->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(k->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	knl_start_type(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0, ++k->seq);
	knl_put(&m, CTRL_ATTR_FAMILY_NAME, CRDBG_GENL_NAME, sizeof(CRDBG_GENL_NAME));
	if (knl_send(k->fd, &m) < 0)
		goto err;
	n = recv(k->fd, rbuf, sizeof(rbuf), 0);
	rem = (int)n;
	for (h = (struct nlmsghdr *)rbuf; n > 0 && NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
		struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
		int alen = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

		if (h->nlmsg_type == NLMSG_ERROR)
			break;
		while (alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= alen) {
			if (a->nla_type == CTRL_ATTR_FAMILY_ID)
				memcpy(&k->family, (char *)a + NLA_HDRLEN, sizeof(k->family));
			alen -= NLA_ALIGN(a->nla_len);
			a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
		}
	}
	knl_ack(k, 0, NULL);	/* the GETFAMILY ack */
	if (k->family)
		return 0;
err:
	close(k->fd);
	k->fd = -1;
	return -ENOENT;
}

static inline void knl_close(struct knl *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

/* One-attribute requests: FREEZE/THAW/QUERY of @pid. */
static inline int knl_pid_cmd(struct knl *k, uint8_t cmd, pid_t pid, uint32_t flags)
{
	struct knl_msg m;

	knl_start(k, &m, cmd);
	knl_u32(&m, CRDBG_A_PID, (uint32_t)pid);
	if (flags)
		knl_u32(&m, CRDBG_A_FLAGS, flags);
	return knl_xact(k, &m);
}

static inline int knl_push_hook(struct knl *k, pid_t pid, uint64_t trampoline, uint64_t arg)
{
	struct knl_msg m;

	knl_start(k, &m, CRDBG_CMD_PUSH_HOOK);
	knl_u32(&m, CRDBG_A_PID, (uint32_t)pid);
	knl_u64(&m, CRDBG_A_TRAMPOLINE, trampoline);
	knl_u64(&m, CRDBG_A_HOOK_ARG, arg);
	return knl_xact(k, &m);
}

#endif /* CRDBG_KMOD_NL_H */
