// SPDX-License-Identifier: GPL-2.0
/* A checkpointed tree's TCP connections aborted before its kill (tcp-abort.h). */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock-diag.h"
#include "sock-inodes.h"
#include "tcp-abort.h"


struct found {
	struct inet_diag_sockid *id;
	unsigned char *family;
	size_t nr;
};

struct diag_req {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

static int diag_send(int fd, int type, int flags, unsigned char family,
		     const struct inet_diag_sockid *id)
{
	struct diag_req q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = type,
			.nlmsg_flags = NLM_F_REQUEST | flags },
		.r = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = CRS_TCP_STATES_HELD },
	};
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	if (id)
		q.r.id = *id;
	if (sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&to, sizeof(to)) != sizeof(q))
		return -errno;
	return 0;
}

static int found_add(struct found *f, unsigned char family, const struct inet_diag_sockid *id)
{
	struct inet_diag_sockid *ids = realloc(f->id, (f->nr + 1) * sizeof(*ids));
	unsigned char *fam;

	if (!ids)
		return -ENOMEM;
	f->id = ids;
	fam = realloc(f->family, f->nr + 1);
	if (!fam)
		return -ENOMEM;
	f->family = fam;
	f->id[f->nr] = *id;
	f->family[f->nr++] = family;
	return 0;
}

struct collecting {
	const struct crs_sock_inodes *s;
	struct found *f;
};

static int collect(void *arg, unsigned char family, const struct inet_diag_msg *m)
{
	struct collecting *c = arg;

	return crs_sock_inodes_has(c->s, m->idiag_inode) ? found_add(c->f, family, &m->id) : 0;
}

/* One socket's abort: 0, or the kernel's negative errno (-ENOENT: gone already). */
static int destroy(int fd, unsigned char family, const struct inet_diag_sockid *id)
{
	char buf[256] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	int r = diag_send(fd, SOCK_DESTROY, NLM_F_ACK, family, id);
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

int crs_tcp_abort_tree(const struct crs_meta *m)
{
	static const unsigned char families[] = { AF_INET, AF_INET6 };
	struct crs_sock_inodes s = { 0 };
	struct found f = { 0 };
	int fd, r = 0, aborted = 0, refused = 0;

	for (size_t i = 0; !r && i < m->nr_procs; i++)
		if (!m->procs[i].zombie)
			r = crs_sock_inodes_add(&s, m->procs[i].pid);
	if (r || !s.nr)
		goto out;
	fd = crs_sock_diag_open();
	if (fd < 0) {
		r = fd;
		goto out;
	}
	for (size_t k = 0; !r && k < sizeof(families); k++)
		r = crs_sock_diag_tcp(fd, families[k], CRS_TCP_STATES_HELD, collect,
				      &(struct collecting){ .s = &s, .f = &f });
	/* every dump is over before the first abort: none sees a table change under it */
	for (size_t i = 0; !r && i < f.nr; i++) {
		int e = destroy(fd, f.family[i], &f.id[i]);

		if (!e)
			aborted++;
		else if (e != -ENOENT)	/* ENOENT: its peer's reset closed it already */
			refused = e;
	}
	close(fd);
	if (!r && !aborted && refused)
		r = refused;
out:
	crs_sock_inodes_free(&s);
	free(f.id);
	free(f.family);
	return r ? r : aborted;
}
