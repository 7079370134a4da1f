// SPDX-License-Identifier: GPL-2.0
/* The kernel's socket tables through sock_diag (sock-diag.h). */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock-diag.h"

int crs_sock_diag_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	return fd < 0 ? -errno : fd;
}

static int send_req(int fd, const void *req, size_t len)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	if (sendto(fd, req, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len)
		return -errno;
	return 0;
}

/* Each message of a dump's answer to one(arg, h) until NLMSG_DONE. */
static int each_answer(int fd, int (*one)(void *arg, const struct nlmsghdr *h), void *arg)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;

		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			return len ? -errno : -EPROTO;
		for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			int r;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ?
					       e->error : -EPROTO;
			}
			r = one(arg, h);
			if (r)
				return r;
		}
	}
}

struct tcp_walk {
	unsigned char family;
	int (*fn)(void *arg, unsigned char family, const struct inet_diag_msg *m);
	void *arg;
	int r;
};

static int tcp_one(void *arg, const struct nlmsghdr *h)
{
	struct tcp_walk *w = arg;

	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
		return 0;
	/* fn's verdict is kept, the dump read to its end: the socket stays usable */
	if (!w->r)
		w->r = w->fn(w->arg, w->family, NLMSG_DATA(h));
	return 0;
}

/* A TCP request of type (a dump, a destroy) for family, in states, of id if any. */
static int send_tcp_req(int fd, int type, int flags, unsigned char family, uint32_t states,
			const struct inet_diag_sockid *id)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = type,
			.nlmsg_flags = NLM_F_REQUEST | flags },
		.r = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = states },
	};

	if (id)
		q.r.id = *id;
	return send_req(fd, &q, sizeof(q));
}

int crs_sock_diag_tcp(int fd, unsigned char family, uint32_t states,
		      int (*fn)(void *arg, unsigned char family, const struct inet_diag_msg *m),
		      void *arg)
{
	struct tcp_walk w = { .family = family, .fn = fn, .arg = arg };
	int r = send_tcp_req(fd, SOCK_DIAG_BY_FAMILY, NLM_F_DUMP, family, states, NULL);

	if (!r)
		r = each_answer(fd, tcp_one, &w);
	return r ? r : w.r;
}

int crs_sock_diag_tcp_destroy(int fd, unsigned char family, const struct inet_diag_sockid *id)
{
	char buf[256] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	int r = send_tcp_req(fd, SOCK_DESTROY, NLM_F_ACK, family, CRS_TCP_STATES_HELD, id);
	ssize_t len;

	if (r)
		return r;
	do
		len = recv(fd, buf, sizeof(buf), 0);
	while (len < 0 && errno == EINTR);
	if (len < 0)
		return -errno;
	if (!NLMSG_OK(h, (size_t)len) || h->nlmsg_type != NLMSG_ERROR ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return -EPROTO;
	return ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
}

struct unix_walk {
	int (*fn)(void *arg, uint32_t ino, uint32_t peer);
	void *arg;
	int r;
};

static int unix_one(void *arg, const struct nlmsghdr *h)
{
	struct unix_walk *w = arg;
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	const struct rtattr *a;
	uint32_t peer = 0;
	int len;

	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return 0;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	for (a = (const struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(peer))
			memcpy(&peer, RTA_DATA(a), sizeof(peer));
	if (!w->r)
		w->r = w->fn(w->arg, m->udiag_ino, peer);
	return 0;
}

int crs_sock_diag_unix(int fd, int (*fn)(void *arg, uint32_t ino, uint32_t peer), void *arg)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_PEER },
	};
	struct unix_walk w = { .fn = fn, .arg = arg };
	int r = send_req(fd, &q, sizeof(q));

	if (!r)
		r = each_answer(fd, unix_one, &w);
	return r ? r : w.r;
}
