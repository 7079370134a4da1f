// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink plumbing shared by every userspace client of crdbg.ko.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/crdbg.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/msg.h>

#include <crdbg/genl.h>

int crdbg_genl_open(struct crdbg_genl *g, char *err_msg, size_t err_len)
{
	int one = 1;
	int err;

	g->sock = nl_socket_alloc();
	if (!g->sock) {
		snprintf(err_msg, err_len, "out of memory allocating a netlink socket");
		return -ENOMEM;
	}
	err = genl_connect(g->sock);
	if (err < 0) {
		snprintf(err_msg, err_len, "cannot open a generic netlink socket: %s",
			 nl_geterror(err));
		err = -ENOTCONN;
		goto fail;
	}
	/* Ask for the kernel's own words when it rejects a request. */
	setsockopt(nl_socket_get_fd(g->sock), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(g->sock), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	g->family = genl_ctrl_resolve(g->sock, CRDBG_GENL_NAME);
	if (g->family < 0) {
		snprintf(err_msg, err_len,
			 "crdbg.ko is not loaded (no \"%s\" generic netlink family); load it with 'modprobe crdbg' or use --backend ptrace",
			 CRDBG_GENL_NAME);
		err = -ENOENT;
		goto fail;
	}
	return 0;
fail:
	nl_socket_free(g->sock);
	g->sock = NULL;
	return err;
}

void crdbg_genl_close(struct crdbg_genl *g)
{
	if (g && g->sock) {
		nl_socket_free(g->sock);
		g->sock = NULL;
	}
}

struct nl_msg *crdbg_genl_msg(const struct crdbg_genl *g, int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, g->family, 0, flags, cmd,
				CRDBG_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

struct transact_ctx {
	crdbg_genl_parse_fn parse;
	void *arg;
	int err;
	char *err_msg;
	size_t err_len;
};

static int on_valid(struct nl_msg *msg, void *data)
{
	struct transact_ctx *ctx = data;
	struct nlattr *attrs[CRDBG_A_MAX + 1];
	int err;

	err = genlmsg_parse(nlmsg_hdr(msg), 0, attrs, CRDBG_A_MAX, NULL);
	if (err < 0) {
		snprintf(ctx->err_msg, ctx->err_len, "malformed reply from crdbg.ko: %s",
			 nl_geterror(err));
		ctx->err = -EPROTO;
		return NL_STOP;
	}
	if (ctx->parse) {
		err = ctx->parse(attrs, ctx->arg);
		if (err < 0) {
			ctx->err = err;
			return NL_STOP;
		}
	}
	return NL_OK;
}

/* Pull the NLMSGERR_ATTR_MSG string out of an extended ack, if any. */
static const char *extack_text(struct nlmsghdr *nlh, struct nlmsgerr *e)
{
	size_t hdr = sizeof(*e);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nlattr *attrs;
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hdr += e->msg.nlmsg_len - sizeof(e->msg);
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)hdr;
	if (len <= 0)
		return NULL;
	attrs = (struct nlattr *)((char *)e + hdr);
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, len, NULL) < 0 || !tb[NLMSGERR_ATTR_MSG])
		return NULL;
	return nla_get_string(tb[NLMSGERR_ATTR_MSG]);
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *data)
{
	struct transact_ctx *ctx = data;
	struct nlmsghdr *nlh = (struct nlmsghdr *)e - 1;
	const char *text = extack_text(nlh, e);

	(void)nla;
	ctx->err = e->error;
	snprintf(ctx->err_msg, ctx->err_len, "%s", text ? text : strerror(-e->error));
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *data)
{
	struct transact_ctx *ctx = data;

	(void)msg;
	ctx->err = 0;
	return NL_STOP;
}

int crdbg_genl_transact(struct crdbg_genl *g, struct nl_msg *msg, crdbg_genl_parse_fn parse,
			void *arg, char *err_msg, size_t err_len)
{
	struct transact_ctx ctx = {
		.parse = parse, .arg = arg, .err = 1,
		.err_msg = err_msg, .err_len = err_len,
	};
	struct nl_cb *cb;
	int err;

	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	err = nl_send_auto(g->sock, msg);
	nlmsg_free(msg);
	if (err < 0) {
		snprintf(err_msg, err_len, "cannot send to crdbg.ko: %s", nl_geterror(err));
		return -EIO;
	}
	cb = nl_cb_alloc(NL_CB_CUSTOM);
	if (!cb) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &ctx);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &ctx);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_ack, &ctx);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &ctx);
	while (ctx.err > 0) {
		err = nl_recvmsgs(g->sock, cb);
		if (err < 0 && ctx.err > 0) {
			snprintf(err_msg, err_len, "no answer from crdbg.ko: %s", nl_geterror(err));
			ctx.err = -EIO;
		}
	}
	nl_cb_put(cb);
	return ctx.err;
}
