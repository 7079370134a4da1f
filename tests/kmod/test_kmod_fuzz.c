// SPDX-License-Identifier: GPL-2.0
/*
 * Throw at least 10,000 malformed, oversized and random generic netlink
 * messages at crdbg.ko over a raw socket. Every malformed one must get an
 * error back (never success), policy violations must carry an extended-ack
 * message, valid requests interleaved with them (freeze, query, hook, thaw
 * of a dummy child) keep working, and the module is healthy afterwards.
 * The guest group's kernel-log check catches any WARN or oops.
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include "kmod-test.h"

#define NMSG 10000
#define BUF_MAX (128 * 1024)

struct fuzz {
	int fd;
	int family;
	uint32_t seq;
	uint64_t rng;
	pid_t dummy;
	unsigned char *buf;
	unsigned char *rbuf;
	size_t len;
	/* results of the last exchange */
	int replies;
	int error;		/* 0 or negative errno of the NLMSG_ERROR */
	int has_msg;		/* the error carried NLMSGERR_ATTR_MSG */
};

static uint32_t rnd(struct fuzz *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return (uint32_t)f->rng;
}

static void start(struct fuzz *f, int cmd)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)f->buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(nlh + 1);

	memset(f->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_type = (uint16_t)f->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++f->seq;
	g->cmd = (uint8_t)cmd;
	g->version = CRDBG_GENL_VERSION;
	f->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

static void put(struct fuzz *f, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)(f->buf + f->len);

	if (f->len + NLA_HDRLEN + NLA_ALIGN(len) > BUF_MAX)
		return;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	f->len += NLA_HDRLEN + NLA_ALIGN(len);
}

static void put_u32(struct fuzz *f, uint16_t type, uint32_t v)
{
	put(f, type, &v, sizeof(v));
}

static void put_u64(struct fuzz *f, uint16_t type, uint64_t v)
{
	put(f, type, &v, sizeof(v));
}

/* Send with nlmsg_len = @claimed (0: the real length); collect the answer. */
static int exchange(struct fuzz *f, size_t claimed)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)f->buf;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	nlh->nlmsg_len = (uint32_t)(claimed ? claimed : f->len);
	f->replies = 0;
	f->error = 1;
	f->has_msg = 0;
	if (sendto(f->fd, f->buf, f->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	/* genetlink runs in our sendmsg(): any answer is queued already */
	while ((n = recv(f->fd, f->rbuf, BUF_MAX, MSG_DONTWAIT)) > 0) {
		struct nlmsghdr *h;
		int rem = (int)n;

		for (h = (struct nlmsghdr *)f->rbuf; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			f->replies++;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				struct nlattr *a = (struct nlattr *)(e + 1);
				int alen = (int)h->nlmsg_len - NLMSG_HDRLEN - (int)sizeof(*e);

				f->error = e->error;
				while ((h->nlmsg_flags & NLM_F_ACK_TLVS) && alen >= NLA_HDRLEN &&
				       a->nla_len >= NLA_HDRLEN && a->nla_len <= alen) {
					if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
						f->has_msg = 1;
					alen -= NLA_ALIGN(a->nla_len);
					a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
				}
			}
		}
	}
	return 0;
}

static const int valid_cmds[] = {
	CRDBG_CMD_GET_STATUS, CRDBG_CMD_FREEZE, CRDBG_CMD_THAW, CRDBG_CMD_QUERY,
	CRDBG_CMD_PUSH_HOOK,
};

static int rnd_cmd(struct fuzz *f)
{
	return valid_cmds[rnd(f) % 5];
}

FIXTURE(fuzz) {
	struct fuzz f;
};

FIXTURE_SETUP(fuzz)
{
	struct crdbg_nl g;
	char err[256];
	int one = 1;

	self->f.dummy = fork();
	if (self->f.dummy == 0) {
		kt_child_setup();
		for (;;)
			pause();
	}
	ASSERT_LT(0, self->f.dummy);
	if (crdbg_nl_open(&g, err, sizeof(err)) == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded");
	self->f.family = g.family;
	crdbg_nl_close(&g);
	self->f.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	ASSERT_LE(0, self->f.fd);
	setsockopt(self->f.fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(self->f.fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	self->f.buf = calloc(1, BUF_MAX);
	self->f.rbuf = calloc(1, BUF_MAX);
	ASSERT_NE(NULL, self->f.buf);
	ASSERT_NE(NULL, self->f.rbuf);
	self->f.rng = 0x9e3779b97f4a7c15ULL;
}

FIXTURE_TEARDOWN(fuzz)
{
	kt_kill(self->f.dummy);
	if (self->f.fd > 0)
		close(self->f.fd);
	free(self->f.buf);
	free(self->f.rbuf);
}

TEST_F_TIMEOUT(fuzz, ten_thousand_bad_messages, 300)
{
	struct fuzz *f = &self->f;
	int i, sent = 0, errors = 0, valid_ok = 0, kind;
	struct kt_status st;
	char err[256];

	for (i = 0; sent < NMSG; i++) {
		int must_fail = 1, want_msg = 0;
		size_t claimed = 0;
		uint32_t v;

		kind = i % 10;
		switch (kind) {
		case 0:		/* unknown command */
			start(f, (rnd(f) % 2) ? 0 : CRDBG_CMD_EVENT + 1 + rnd(f) % 200);
			put_u32(f, CRDBG_A_PID, f->dummy);
			break;
		case 1:		/* unknown attribute type */
			start(f, rnd_cmd(f));
			put_u32(f, CRDBG_A_PID, f->dummy);
			put_u32(f, (uint16_t)(CRDBG_A_MAX + 1 + rnd(f) % 1000), rnd(f));
			want_msg = 1;
			break;
		case 2:		/* an attribute this command does not take */
			start(f, CRDBG_CMD_FREEZE);
			put_u32(f, CRDBG_A_PID, 999999);
			v = rnd(f) % 4;
			put_u32(f, v == 0 ? CRDBG_A_THREADS : v == 1 ? CRDBG_A_EVENT :
				   v == 2 ? CRDBG_A_VERSION : CRDBG_A_TRAMPOLINE, 1);
			want_msg = 1;
			break;
		case 3:		/* wrong length */
			start(f, rnd_cmd(f) == CRDBG_CMD_GET_STATUS ? CRDBG_CMD_QUERY : rnd_cmd(f));
			v = f->dummy;
			put(f, CRDBG_A_PID, &v, (uint16_t)(1 + rnd(f) % 3));
			break;
		case 4:		/* unknown flag bits */
			start(f, CRDBG_CMD_FREEZE);
			put_u32(f, CRDBG_A_PID, f->dummy);
			put_u32(f, CRDBG_A_FLAGS, (rnd(f) | 2) & ~1u);
			want_msg = 1;
			break;
		case 5: {	/* random attribute soup, never naming a real pid */
			int n = rnd(f) % 32, j;

			start(f, rnd_cmd(f));
			for (j = 0; j < n && f->len < 4096; j++) {
				unsigned char junk[64];
				uint16_t len = rnd(f) % sizeof(junk), k;

				for (k = 0; k < len; k++)
					junk[k] = (unsigned char)rnd(f);
				put(f, (uint16_t)(rnd(f) % (CRDBG_A_MAX + 4)) |
				       (rnd(f) % 8 ? 0 : NLA_F_NESTED), junk, len);
			}
			put_u32(f, CRDBG_A_PID, 4000000 + rnd(f) % 100000);	/* > any guest pid */
			break;
		}
		case 6:		/* oversized: up to 64 KiB of attributes */
			start(f, rnd_cmd(f));
			while (f->len < 60000)
				put_u32(f, (uint16_t)(CRDBG_A_MAX + 1 + rnd(f) % 100), rnd(f));
			break;
		case 7:		/* lying or truncated headers */
			start(f, rnd_cmd(f));
			put_u32(f, CRDBG_A_PID, f->dummy);
			v = rnd(f) % 3;
			if (v == 0)
				claimed = NLMSG_HDRLEN + 1;	/* shorter than the genl header */
			else if (v == 1)
				claimed = f->len + 4 + rnd(f) % 1000;	/* longer than sent: dropped */
			else
				((struct nlattr *)(f->buf + NLMSG_HDRLEN + GENL_HDRLEN))->nla_len = 2000;
			if (v == 1)
				must_fail = 0;	/* the kernel drops it silently */
			break;
		case 8:		/* a valid request on the dummy */
			v = rnd(f) % 4;
			start(f, v == 0 ? CRDBG_CMD_FREEZE : v == 1 ? CRDBG_CMD_QUERY :
				 v == 2 ? CRDBG_CMD_PUSH_HOOK : CRDBG_CMD_THAW);
			put_u32(f, CRDBG_A_PID, f->dummy);
			if (v == 2) {
				put_u64(f, CRDBG_A_TRAMPOLINE,
					(uint64_t)(uintptr_t)crdbg_hook_trampoline);
				put_u64(f, CRDBG_A_HOOK_ARG, rnd(f));
			}
			must_fail = 0;
			break;
		default:	/* status, with a stray flag in the genl header */
			start(f, CRDBG_CMD_GET_STATUS);
			((struct genlmsghdr *)(f->buf + NLMSG_HDRLEN))->reserved = (uint16_t)(rnd(f) | 1);
			break;
		}
		ASSERT_EQ(0, exchange(f, claimed)) TH_LOG("send failed at message %d", i);
		sent++;
		if (f->error < 0)
			errors++;
		if (must_fail) {
			ASSERT_GT(0, f->error) TH_LOG("message %d (kind %d) was accepted", i, kind);
			if (want_msg)
				EXPECT_TRUE(f->has_msg) TH_LOG("kind %d: no extack text", kind);
		} else if (kind == 8 && f->error == 0) {
			valid_ok++;
		}
	}
	TH_LOG("%d messages, %d errors, %d valid requests succeeded", sent, errors, valid_ok);
	EXPECT_LE(NMSG, sent);
	EXPECT_LT(0, valid_ok);

	/* closing the socket releases whatever the valid requests left frozen */
	close(f->fd);
	f->fd = -1;
	ASSERT_EQ(0, kt_status(&st, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, st.nr_frozen);
	EXPECT_EQ(0, waitpid(f->dummy, NULL, WNOHANG));	/* the dummy survived */
}

TEST_HARNESS_MAIN
