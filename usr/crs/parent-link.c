// SPDX-License-Identifier: GPL-2.0
/* A tree connected to its parent, refused before the freeze (parent-link.h). */
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "error.h"
#include "meta.h"
#include "parent-link.h"
#include "proc.h"
#include "sock-diag.h"
#include "sock-inodes.h"

/* A TCP socket's 4-tuple, as sock_diag gives it (addresses in network order). */
struct tcp_end {
	uint32_t ino;
	struct inet_diag_sockid id;
};

struct tcp_ends {
	struct tcp_end *at;
	size_t nr;
};

struct link_search {
	const struct crs_sock_inodes *tree, *parent;
	struct tcp_ends ends;	/* the tree's connected TCP sockets */
	uint32_t found;		/* the tree's socket that leads to the parent */
};

static int tree_tcp(void *arg, unsigned char family, const struct inet_diag_msg *m)
{
	struct link_search *ls = arg;

	(void)family;
	struct tcp_end *at;

	if (m->idiag_state == TCP_LISTEN || !crs_sock_inodes_has(ls->tree, m->idiag_inode))
		return 0;
	at = realloc(ls->ends.at, (ls->ends.nr + 1) * sizeof(*at));
	if (!at)
		return -ENOMEM;
	ls->ends.at = at;
	ls->ends.at[ls->ends.nr++] = (struct tcp_end){ .ino = m->idiag_inode, .id = m->id };
	return 0;
}

/* The other end of a tree's connection: the same 4-tuple, turned round. */
static bool turned_round(const struct inet_diag_sockid *a, const struct inet_diag_sockid *b)
{
	return a->idiag_sport == b->idiag_dport && a->idiag_dport == b->idiag_sport &&
	       !memcmp(a->idiag_src, b->idiag_dst, sizeof(a->idiag_src)) &&
	       !memcmp(a->idiag_dst, b->idiag_src, sizeof(a->idiag_dst));
}

static int parent_tcp(void *arg, unsigned char family, const struct inet_diag_msg *m)
{
	struct link_search *ls = arg;

	(void)family;
	if (!crs_sock_inodes_has(ls->parent, m->idiag_inode))
		return 0;
	for (size_t i = 0; i < ls->ends.nr; i++)
		if (turned_round(&ls->ends.at[i].id, &m->id)) {
			ls->found = ls->ends.at[i].ino;
			return 1;
		}
	return 0;
}

static int tree_unix(void *arg, uint32_t ino, uint32_t peer)
{
	struct link_search *ls = arg;

	if (peer && crs_sock_inodes_has(ls->tree, ino) && crs_sock_inodes_has(ls->parent, peer) &&
	    !crs_sock_inodes_has(ls->tree, peer)) {
		ls->found = ino;
		return 1;
	}
	return 0;
}

/* The socket inode found leads to the parent: 1; 0 none; -errno. */
static int search(struct link_search *ls, bool unix_outside_ok)
{
	static const unsigned char families[] = { AF_INET, AF_INET6 };
	int fd = crs_sock_diag_open(), r = 0;

	if (fd < 0)
		return fd;
	for (size_t k = 0; r >= 0 && !ls->found && k < sizeof(families); k++) {
		ls->ends.nr = 0;
		r = crs_sock_diag_tcp(fd, families[k], CRS_TCP_STATES_HELD, tree_tcp, ls);
		if (r >= 0 && ls->ends.nr)
			r = crs_sock_diag_tcp(fd, families[k], CRS_TCP_STATES_HELD, parent_tcp, ls);
	}
	if (r >= 0 && !ls->found && !unix_outside_ok)
		r = crs_sock_diag_unix(fd, tree_unix, ls);
	close(fd);
	free(ls->ends.at);
	return r < 0 ? r : ls->found != 0;
}

int crs_parent_link_check(pid_t root, const pid_t *pids, size_t nr, bool unix_outside_ok,
			  char *err, size_t errlen)
{
	struct crs_sock_inodes tree = { 0 }, parent = { 0 };
	struct link_search ls = { .tree = &tree, .parent = &parent };
	char comm[64] = "?", pcomm[64] = "?";
	struct crs_proc ids = { 0 };
	pid_t who;
	int r = 0;

	if (crs_proc_ids(root, &ids) || ids.ppid <= 1)
		return 0;
	for (size_t i = 0; i < nr; i++)
		if (pids[i] == ids.ppid)
			return 0;	/* checkpointed with it */
	if (crs_sock_inodes_add(&parent, ids.ppid) || !parent.nr)
		goto out;	/* no socket, or not ours to read: nothing known */
	for (size_t i = 0; !r && i < nr; i++)
		r = crs_sock_inodes_add(&tree, pids[i]);
	if (r || !tree.nr || search(&ls, unix_outside_ok) <= 0) {
		r = 0;
		goto out;
	}
	who = crs_sock_inodes_find(&tree, ls.found)->pid;	/* found among them */
	crs_proc_file(who, "comm", comm, sizeof(comm));
	crs_proc_file(ids.ppid, "comm", pcomm, sizeof(pcomm));
	comm[strcspn(comm, "\n")] = pcomm[strcspn(pcomm, "\n")] = '\0';
	r = crs_fail(err, errlen, -EXDEV,
		     "pid %d (%s) is connected to its tree's parent, pid %d (%s), which a restart does not bring back: nothing was frozen. %s",
		     who, comm, ids.ppid, pcomm,
		     strcmp(pcomm, "slurmstepd") ?
			     "Checkpoint the parent's tree instead, or end that connection first" :
			     "An MPI rank under srun --mpi=pmix (or pmi2) is a PMI client of its slurmstepd: run the job under mpirun or mpiexec.hydra inside salloc (their daemons are checkpointed with the ranks), or srun --mpi=none if it uses no PMI");
out:
	crs_sock_inodes_free(&tree);
	crs_sock_inodes_free(&parent);
	return r;
}
