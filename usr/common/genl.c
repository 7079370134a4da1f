// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink to crdbg.ko over a plain socket (crdbg/genl.h): one
 * request at a time, replies matched to it by sequence number and taken
 * from the kernel only, every datagram read whole whatever its size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <crdbg/genl.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Each attribute of the family as <linux/crdbg.h> types it. */
static const struct crdbg_nla_policy crdbg_policy[CRDBG_A_MAX + 1] = {
	[CRDBG_A_VERSION] = { .kind = CRDBG_NLA_STRING },
	[CRDBG_A_NR_FROZEN] = { .kind = CRDBG_NLA_U32 },
	[CRDBG_A_PID] = { .kind = CRDBG_NLA_U32 },
	[CRDBG_A_FLAGS] = { .kind = CRDBG_NLA_U32 },
	[CRDBG_A_PROC_MEM_FD] = { .kind = CRDBG_NLA_U32 },
	[CRDBG_A_TID] = { .kind = CRDBG_NLA_U32 },
	[CRDBG_A_TRAMPOLINE] = { .kind = CRDBG_NLA_U64 },
	[CRDBG_A_HOOK_ARG] = { .kind = CRDBG_NLA_U64 },
	[CRDBG_A_OWNER_PORTID] = { .kind = CRDBG_NLA_U32 },
	[CRDBG_A_THREADS] = { .kind = CRDBG_NLA_NESTED },
	[CRDBG_A_EVENT] = { .kind = CRDBG_NLA_U32 },
};

/* The attributes after h's generic netlink header (h is len bytes at most). */
static int parse_genl(const struct nlmsghdr *h, size_t len, const struct nlattr **tb, int max,
		      const struct crdbg_nla_policy *policy)
{
	size_t at = NLMSG_HDRLEN + GENL_HDRLEN;

	if (len < NLMSG_HDRLEN || h->nlmsg_len < at || h->nlmsg_len > len)
		return -EPROTO;
	return crdbg_nla_parse(tb, max, (const char *)h + at, h->nlmsg_len - at, policy);
}

int crdbg_genl_parse_message(const struct nlmsghdr *h, size_t len,
			     const struct nlattr *attrs[CRDBG_A_MAX + 1])
{
	return parse_genl(h, len, attrs, CRDBG_A_MAX, crdbg_policy);
}

/*
 * One datagram from the kernel into *buf, grown to its size: its length,
 * or -errno. What another socket sends to ours is dropped.
 */
static ssize_t recv_from_kernel(int fd, char **buf, size_t *cap)
{
	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov;
		struct msghdr mh = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
		};
		ssize_t n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if ((size_t)n > *cap) {
			char *bigger = realloc(*buf, (size_t)n);

			if (!bigger)
				return -ENOMEM;
			*buf = bigger;
			*cap = (size_t)n;
		}
		iov.iov_base = *buf;
		iov.iov_len = *cap;
		n = recvmsg(fd, &mh, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (mh.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		if (mh.msg_namelen == sizeof(from) && from.nl_pid == 0)
			return n;
	}
}

/* An NLMSG_ERROR: 0 for an ack, else the kernel's -errno and its words. */
static int on_error(const struct nlmsghdr *h, size_t len, char *err_msg, size_t err_len)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	const char *text;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || h->nlmsg_len > len || e->error > 0 ||
	    e->error < -4095) {
		snprintf(err_msg, err_len, "malformed acknowledgement from the kernel");
		return -EPROTO;
	}
	if (!e->error)
		return 0;
	text = crdbg_nla_extack_text(h, len);
	snprintf(err_msg, err_len, "%s", text ? text : strerror(-e->error));
	return e->error;
}

typedef int (*reply_fn)(const struct nlmsghdr *h, size_t len, void *arg, char *err_msg,
			size_t err_len);

/* Send r and hand each reply message to fn until the ack (or done). */
static int exchange(struct crdbg_genl *g, struct crdbg_nla_request *r, reply_fn fn, void *arg,
		    char *err_msg, size_t err_len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	size_t cap = 0;
	char *buf = NULL;
	uint32_t seq;
	int ret = 1;

	if (r->overflow) {
		snprintf(err_msg, err_len, "netlink request too long for one message");
		return -EMSGSIZE;
	}
	r->hdr.nlmsg_flags |= NLM_F_ACK;
	r->hdr.nlmsg_seq = seq = ++g->seq;
	if (sendto(g->fd, r->buf, r->hdr.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		snprintf(err_msg, err_len, "cannot send to the kernel: %s", strerror(errno));
		return -EIO;
	}
	while (ret > 0) {
		ssize_t n = recv_from_kernel(g->fd, &buf, &cap);
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		int rem = (int)n;

		if (n < 0) {
			snprintf(err_msg, err_len, "no answer from the kernel: %s", strerror((int)-n));
			ret = -EIO;
			break;
		}
		for (; ret > 0 && NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			/* an earlier request's late ack, or an event */
			if (h->nlmsg_seq != seq || h->nlmsg_type == NLMSG_NOOP)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				ret = 0;
			else if (h->nlmsg_type == NLMSG_ERROR)
				ret = on_error(h, (size_t)rem, err_msg, err_len);
			else if (h->nlmsg_type == NLMSG_OVERRUN)
				ret = -EIO;
			else
				ret = fn(h, (size_t)rem, arg, err_msg, err_len) ?: 1;
		}
		if (ret == -EIO && !err_msg[0])
			snprintf(err_msg, err_len, "the kernel's answer overran the socket");
	}
	free(buf);
	return ret;
}

struct family {
	uint16_t id;
	uint32_t events_group;
};

static int on_family(const struct nlmsghdr *h, size_t len, void *arg, char *err_msg,
		     size_t err_len)
{
	static const struct crdbg_nla_policy ctrl[CTRL_ATTR_MAX + 1] = {
		[CTRL_ATTR_FAMILY_ID] = { .kind = CRDBG_NLA_U16 },
		[CTRL_ATTR_MCAST_GROUPS] = { .kind = CRDBG_NLA_NESTED },
	};
	static const struct crdbg_nla_policy group[CTRL_ATTR_MCAST_GRP_MAX + 1] = {
		[CTRL_ATTR_MCAST_GRP_NAME] = { .kind = CRDBG_NLA_STRING },
		[CTRL_ATTR_MCAST_GRP_ID] = { .kind = CRDBG_NLA_U32 },
	};
	const struct nlattr *tb[CTRL_ATTR_MAX + 1], *gtb[CTRL_ATTR_MCAST_GRP_MAX + 1], *pos;
	struct family *f = arg;
	size_t rem;

	if (h->nlmsg_type != GENL_ID_CTRL)
		return 0;
	if (parse_genl(h, len, tb, CTRL_ATTR_MAX, ctrl) || !tb[CTRL_ATTR_FAMILY_ID]) {
		snprintf(err_msg, err_len, "malformed family from the kernel's genetlink controller");
		return -EPROTO;
	}
	f->id = crdbg_nla_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return 0;
	crdbg_nla_for_each_nested(pos, tb[CTRL_ATTR_MCAST_GROUPS], rem)
		if (!crdbg_nla_parse_nested(gtb, CTRL_ATTR_MCAST_GRP_MAX, pos, group) &&
		    gtb[CTRL_ATTR_MCAST_GRP_NAME] && gtb[CTRL_ATTR_MCAST_GRP_ID] &&
		    !strcmp(crdbg_nla_string(gtb[CTRL_ATTR_MCAST_GRP_NAME]), CRDBG_MCGRP_EVENTS))
			f->events_group = crdbg_nla_u32(gtb[CTRL_ATTR_MCAST_GRP_ID]);
	return 0;
}

int crdbg_genl_open(struct crdbg_genl *g, char *err_msg, size_t err_len)
{
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	struct family f = { .id = 0 };
	struct crdbg_nla_request r;
	char why[256] = "";
	int one = 1, ret;

	memset(g, 0, sizeof(*g));
	g->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (g->fd < 0 || bind(g->fd, (struct sockaddr *)&local, sizeof(local))) {
		snprintf(err_msg, err_len, "cannot open a generic netlink socket: %s",
			 strerror(errno));
		crdbg_genl_close(g);
		return -ENOTCONN;
	}
	/* Ask for the kernel's own words when it rejects a request. */
	setsockopt(g->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(g->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	/* the controller loads crdbg.ko here when it is installed (its genl alias) */
	crdbg_nla_request_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	crdbg_nla_put_string(&r, CTRL_ATTR_FAMILY_NAME, CRDBG_GENL_NAME);
	ret = exchange(g, &r, on_family, &f, why, sizeof(why));
	if (ret == -ENOENT || (!ret && !f.id)) {
		snprintf(err_msg, err_len,
			 "crdbg.ko is not loaded (no \"%s\" generic netlink family); load it with 'modprobe crdbg' or use --backend ptrace",
			 CRDBG_GENL_NAME);
		ret = -ENOENT;
	} else if (ret) {
		snprintf(err_msg, err_len, "cannot look up the \"%s\" generic netlink family: %s",
			 CRDBG_GENL_NAME, why);
	}
	if (ret) {
		crdbg_genl_close(g);
		return ret;
	}
	g->family = f.id;
	g->events_group = f.events_group;
	return 0;
}

void crdbg_genl_close(struct crdbg_genl *g)
{
	if (g && g->fd >= 0)
		close(g->fd);
	if (g)
		g->fd = -1;
}

int crdbg_genl_subscribe_events(struct crdbg_genl *g, char *err_msg, size_t err_len)
{
	if (!g->events_group) {
		snprintf(err_msg, err_len, "crdbg.ko has no \"%s\" multicast group",
			 CRDBG_MCGRP_EVENTS);
		return -ENOENT;
	}
	if (setsockopt(g->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g->events_group,
		       sizeof(g->events_group))) {
		snprintf(err_msg, err_len, "cannot join crdbg.ko's events: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

void crdbg_genl_request(struct crdbg_nla_request *r, const struct crdbg_genl *g, uint8_t cmd,
			uint16_t flags)
{
	crdbg_nla_request_init(r, g->family, cmd, CRDBG_GENL_VERSION, flags);
}

struct crdbg_reply {
	uint16_t family;
	crdbg_genl_parse_fn parse;
	void *arg;
};

static int on_crdbg(const struct nlmsghdr *h, size_t len, void *arg, char *err_msg,
		    size_t err_len)
{
	const struct nlattr *attrs[CRDBG_A_MAX + 1];
	struct crdbg_reply *c = arg;

	if (h->nlmsg_type != c->family)
		return 0;
	if (crdbg_genl_parse_message(h, len, attrs)) {
		snprintf(err_msg, err_len,
			 "malformed reply from crdbg.ko: an attribute overruns it or has the wrong type");
		return -EPROTO;
	}
	return c->parse ? c->parse(attrs, c->arg) : 0;
}

int crdbg_genl_transact(struct crdbg_genl *g, struct crdbg_nla_request *r,
			crdbg_genl_parse_fn parse, void *arg, char *err_msg, size_t err_len)
{
	struct crdbg_reply c = { .family = g->family, .parse = parse, .arg = arg };

	if (err_len)
		err_msg[0] = '\0';
	return exchange(g, r, on_crdbg, &c, err_msg, err_len);
}
