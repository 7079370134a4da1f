// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink to crdbg.ko over libnl-genl-3 (crdbg/nl.h): one
 * request at a time, its answers told from an earlier request's late
 * ack or an event by sequence number and taken from the kernel only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <crdbg/nl.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Each attribute of the family as <linux/crdbg.h> types it. */
static const struct nla_policy crdbg_policy[CRDBG_A_MAX + 1] = {
	[CRDBG_A_VERSION] = { .type = NLA_STRING },
	[CRDBG_A_NR_FROZEN] = { .type = NLA_U32 },
	[CRDBG_A_PID] = { .type = NLA_U32 },
	[CRDBG_A_FLAGS] = { .type = NLA_U32 },
	[CRDBG_A_PROC_MEM_FD] = { .type = NLA_U32 },
	[CRDBG_A_TID] = { .type = NLA_U32 },
	[CRDBG_A_TRAMPOLINE] = { .type = NLA_U64 },
	[CRDBG_A_HOOK_ARG] = { .type = NLA_U64 },
	[CRDBG_A_OWNER_PORTID] = { .type = NLA_U32 },
	[CRDBG_A_THREADS] = { .type = NLA_NESTED },
	[CRDBG_A_EVENT] = { .type = NLA_U32 },
};

int crdbg_nl_parse_message(struct nlmsghdr *h, size_t len, struct nlattr *attrs[CRDBG_A_MAX + 1])
{
	size_t at = NLMSG_HDRLEN + GENL_HDRLEN;
	struct nlattr *a;
	int rem;

	if (len < NLMSG_HDRLEN || h->nlmsg_len < at || h->nlmsg_len > len)
		return -EPROTO;
	if (genlmsg_parse(h, 0, attrs, CRDBG_A_MAX, crdbg_policy))
		return -EPROTO;
	/* libnl stops at an attribute that overruns: the whole message is refused */
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(h), 0), genlmsg_attrlen(nlmsg_data(h), 0),
			  rem)
		;
	return rem > 0 ? -EPROTO : 0;
}

const char *crdbg_nl_extack_text(const struct nlmsghdr *h, size_t len)
{
	static const struct nla_policy policy[NLMSGERR_ATTR_MAX + 1] = {
		[NLMSGERR_ATTR_MSG] = { .type = NLA_STRING },
	};
	const struct nlmsgerr *e = NLMSG_DATA(h);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t at, echoed = 0;

	if (len < NLMSG_HDRLEN || h->nlmsg_len > len ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || !(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	/* without NETLINK_CAP_ACK the request comes back before the TLVs */
	if (!(h->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < NLMSG_HDRLEN || e->msg.nlmsg_len > h->nlmsg_len)
			return NULL;
		echoed = e->msg.nlmsg_len - NLMSG_HDRLEN;
	}
	at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*e) + echoed);
	if (at > h->nlmsg_len ||
	    nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)h + at),
		      (int)(h->nlmsg_len - at), policy) ||
	    !tb[NLMSGERR_ATTR_MSG])
		return NULL;
	return nla_get_string(tb[NLMSGERR_ATTR_MSG]);
}

/* One exchange: what the callbacks found, and the words for a failure. */
struct exchange {
	crdbg_nl_parse_fn parse;
	void *arg;
	int family;
	uint32_t seq;
	bool done;
	int err;
	char *err_msg;
	size_t err_len;
};

static int finish(struct exchange *x, int err)
{
	x->done = true;
	x->err = err;
	return NL_STOP;
}

/* Only the kernel answers: what another socket sends to ours is dropped. */
static int on_msg_in(struct nl_msg *msg, void *arg)
{
	(void)arg;
	return nlmsg_get_src(msg)->nl_pid ? NL_SKIP : NL_OK;
}

/* An earlier request's late ack, or an event, is not this answer. */
static int on_seq_check(struct nl_msg *msg, void *arg)
{
	struct exchange *x = arg;

	return nlmsg_hdr(msg)->nlmsg_seq == x->seq ? NL_OK : NL_SKIP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlattr *attrs[CRDBG_A_MAX + 1];
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct exchange *x = arg;
	int ret;

	if (h->nlmsg_type != x->family)
		return NL_SKIP;
	if (crdbg_nl_parse_message(h, h->nlmsg_len, attrs)) {
		snprintf(x->err_msg, x->err_len,
			 "malformed reply from crdbg.ko: an attribute overruns it or has the wrong type");
		return finish(x, -EPROTO);
	}
	ret = x->parse ? x->parse(attrs, x->arg) : 0;
	return ret < 0 ? finish(x, ret) : NL_OK;
}

/* An NLMSG_ERROR with an error: the kernel's errno and its own words. */
static int on_error(struct sockaddr_nl *from, struct nlmsgerr *e, void *arg)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)((const char *)e - NLMSG_HDRLEN);
	struct exchange *x = arg;
	const char *text;

	(void)from;
	if (e->error > 0 || e->error < -4095) {
		snprintf(x->err_msg, x->err_len, "malformed acknowledgement from the kernel");
		return finish(x, -EPROTO);
	}
	text = crdbg_nl_extack_text(h, h->nlmsg_len);
	snprintf(x->err_msg, x->err_len, "%s", text ? text : strerror(-e->error));
	return finish(x, e->error);
}

/* The ack (NLMSG_ERROR 0) of a request, or the end of a dump. */
static int on_done(struct nl_msg *msg, void *arg)
{
	(void)msg;
	return finish(arg, 0);
}

int crdbg_nl_transact(struct crdbg_nl *nl, struct nl_msg *msg, crdbg_nl_parse_fn parse,
		      void *arg, char *err_msg, size_t err_len)
{
	struct exchange x = {
		.parse = parse, .arg = arg, .family = nl->family,
		.err_msg = err_msg, .err_len = err_len,
	};
	struct nl_cb *cb;
	int ret;

	if (err_len)
		err_msg[0] = '\0';
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!msg || !cb) {
		snprintf(err_msg, err_len, "out of memory for a netlink request");
		nlmsg_free(msg);
		nl_cb_put(cb);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_MSG_IN, NL_CB_CUSTOM, on_msg_in, &x);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, on_seq_check, &x);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &x);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, &x);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, &x);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &x);

	ret = nl_send_auto(nl->sk, msg);
	x.seq = nlmsg_hdr(msg)->nlmsg_seq;
	nlmsg_free(msg);
	if (ret < 0) {
		snprintf(err_msg, err_len, "cannot send to the kernel: %s", nl_geterror(ret));
		nl_cb_put(cb);
		return -EIO;
	}
	while (!x.done) {
		ret = nl_recvmsgs(nl->sk, cb);
		if (ret < 0 && !x.done) {
			snprintf(err_msg, err_len, "no answer from the kernel: %s", nl_geterror(ret));
			x.err = -EIO;
			break;
		}
	}
	nl_cb_put(cb);
	return x.err;
}

int crdbg_nl_open(struct crdbg_nl *nl, char *err_msg, size_t err_len)
{
	int one = 1, fd, ret;

	nl->family = 0;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		snprintf(err_msg, err_len, "out of memory for a netlink socket");
		return -ENOMEM;
	}
	ret = genl_connect(nl->sk);
	if (ret < 0) {
		snprintf(err_msg, err_len, "cannot open a generic netlink socket: %s",
			 nl_geterror(ret));
		crdbg_nl_close(nl);
		return -ENOTCONN;
	}
	fd = nl_socket_get_fd(nl->sk);
	/* a freeze lives as long as this socket: no program we start may hold it */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* ask for the kernel's own words when it rejects a request */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* a QUERY of many threads is one large datagram: read each whole */
	nl_socket_enable_msg_peek(nl->sk);

	/* the controller loads crdbg.ko here when it is installed (its genl alias) */
	ret = genl_ctrl_resolve(nl->sk, CRDBG_GENL_NAME);
	if (ret == -NLE_OBJ_NOTFOUND) {
		snprintf(err_msg, err_len,
			 "crdbg.ko is not loaded (no \"%s\" generic netlink family); load it with 'modprobe crdbg' or use --backend ptrace",
			 CRDBG_GENL_NAME);
		crdbg_nl_close(nl);
		return -ENOENT;
	}
	if (ret < 0) {
		snprintf(err_msg, err_len, "cannot look up the \"%s\" generic netlink family: %s",
			 CRDBG_GENL_NAME, nl_geterror(ret));
		crdbg_nl_close(nl);
		return -EIO;
	}
	nl->family = ret;
	return 0;
}

void crdbg_nl_close(struct crdbg_nl *nl)
{
	if (!nl || !nl->sk)
		return;
	nl_socket_free(nl->sk);		/* closes it: the kernel releases plain freezes */
	nl->sk = NULL;
}

int crdbg_nl_subscribe_events(struct crdbg_nl *nl, char *err_msg, size_t err_len)
{
	int group = genl_ctrl_resolve_grp(nl->sk, CRDBG_GENL_NAME, CRDBG_MCGRP_EVENTS);

	if (group < 0) {
		snprintf(err_msg, err_len, "crdbg.ko has no \"%s\" multicast group: %s",
			 CRDBG_MCGRP_EVENTS, nl_geterror(group));
		return -ENOENT;
	}
	/* the socket option itself, for the kernel's errno (-EPERM: not allowed) */
	if (setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group,
		       sizeof(group))) {
		snprintf(err_msg, err_len, "cannot join crdbg.ko's events: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int crdbg_nl_fd(const struct crdbg_nl *nl)
{
	return nl_socket_get_fd(nl->sk);
}

struct nl_msg *crdbg_nl_request(const struct crdbg_nl *nl, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags, cmd,
				CRDBG_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}
