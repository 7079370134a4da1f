// SPDX-License-Identifier: GPL-2.0
/* A checkpointed tree's TCP connections aborted before its kill (tcp-abort.h). */
#include <errno.h>
#include <stdlib.h>
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
		int e = crs_sock_diag_tcp_destroy(fd, f.family[i], &f.id[i]);

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
