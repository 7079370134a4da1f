/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tree's lineage at restart: the parent, session and process group
 * its root had outside the tree (Documentation/checkpoint.md, "pid, ppid,
 * pgid, sid").
 *
 * CRIU restores every pid of a tree, and the parent, group and session
 * of each process inside it; the root's parent is whoever runs criu, and
 * a session or group led from outside (an srun task: its parent is
 * slurmstepd, its session one slurmd made, its group the node's first
 * task) is moved into criu's (--shell-job). So a restart gives criu a
 * *keeper*: a process made with the old parent's pid (clone3 set_tid),
 * in a session made with the old session's pid (a stand-in that called
 * setsid()), the subreaper of what it runs. The keeper forks criu with
 * --restore-sibling --restore-detached, so that the restored root
 * becomes the keeper's own child, and each criu joins the old group
 * first (the keeper's, or the group another part on the node restores:
 * it waits for it to exist). Several parts of a job on one node that
 * had one parent (srun's tasks) share the node's keeper: the first
 * makes it, the others find it by its name (an abstract unix socket of
 * the node's network namespace, "crdbg-lineage-PPID-SID") and ask it to
 * run their criu. The keeper reports each child's exit (criu's, the
 * root's); it ends once it has no child and no client, and the part
 * that made it waits for that before it ends itself (a Slurm step ends
 * with its first task).
 */
#ifndef CRDBG_CRS_LINEAGE_H
#define CRDBG_CRS_LINEAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <crdbg/crs.h>

/* What the root had outside its tree (from the checkpoint's metadata). */
struct crs_lineage_want {
	pid_t root;
	pid_t ppid;	/* the root's parent, never in the tree */
	pid_t sid;	/* 0: the tree leads its session */
	pid_t pgid;	/* 0: the tree leads its group, or it cannot come back */
	pid_t lost_pgid;	/* a group led by none of parent, session, node_roots */
};

/*
 * m's root and its outside ids. A group led from outside comes back
 * when the parent or the session's leader led it, or the root of
 * another part on the node (node_roots, "PID,PID" or "-"; NULL for a
 * lone restart); else it is lost_pgid, and the tree comes back in a
 * group criu leads, as without a keeper. false when the tree cannot be given its lineage (why
 * says so): no root record, a parent no process can stand in for (pid
 * 1, 0), a process of the tree in a group or session led from outside
 * other than the root's, a terminal of a session led from outside
 * (CRIU gives the tree criu's own, which a new session lacks).
 */
bool crs_lineage_want(const struct crs_meta *m, const char *node_roots,
		      struct crs_lineage_want *w, char *why, size_t whylen);

struct crs_lineage {
	int fd;			/* connection to the keeper, -1 for none */
	pid_t made;		/* the stand-in this process made (its child), or 0 */
	pid_t pgid;		/* the group criu joins: 0 the keeper's, -1 its own */
	struct crs_lineage_exit {
		pid_t pid;
		int status;
	} exits[16];		/* reported, not yet taken */
	size_t nr_exits;
	pid_t watched[16];	/* whose exit the keeper reports to us */
	size_t nr_watched;
};

#define CRS_LINEAGE_INIT { .fd = -1 }
#define CRS_LINEAGE_MAX_FDS 16	/* a spawned child's fds */
/*
 * A spawned child waits this long for the group it joins (another
 * part's root leads it), then exits with CRS_LINEAGE_NO_GROUP: longer
 * than the leader's part may wait for its pids and ports before its
 * restore (CRS_RESTART_PID_WAIT_S and CRS_RESTART_PORT_WAIT_S) and
 * takes for the restore itself on a loaded node.
 */
#define CRS_LINEAGE_GROUP_WAIT_S 180
#define CRS_LINEAGE_NO_GROUP 125

/*
 * Connect to the node's keeper for w, making it (and the session's
 * stand-in) when there is none. 0, or a negative errno with why saying
 * why the lineage cannot be kept (a pid in use, no clone3 set_tid):
 * the caller restores as before, criu its root's parent. Call it
 * before starting a thread: the stand-ins are forks of this process.
 */
int crs_lineage_open(struct crs_lineage *l, const struct crs_lineage_want *w, char *why,
		     size_t whylen);

/*
 * Have the keeper run argv (argv[0] a path) with env added to its
 * environment, in l's group, with fds[k] (this process's) as its fd
 * targets[k] and no other. The child's pid, or a negative errno.
 */
pid_t crs_lineage_spawn(struct crs_lineage *l, char *const argv[], char *const env[],
			const int *fds, const int *targets, size_t nr_fds);

/*
 * Wait up to ms (< 0: no limit) for the keeper to report pid's exit (a
 * child it spawned, or the restored root): 1 with its wait status in
 * *status, 0 when ms passed, a negative errno when the keeper is gone.
 */
int crs_lineage_wait(struct crs_lineage *l, pid_t pid, int *status, int ms);

/*
 * Disconnect (the keeper kills a spawned child still running, as
 * PR_SET_PDEATHSIG would). With released (a job's part that made the
 * keeper and released its tree), wait until the keeper ended, i.e. until
 * every tree of the node it holds has ended: a Slurm step's processes go
 * with its first task. A lone restart does not wait: it ends with its
 * root, and the keeper reaps what the tree left running. A restart that
 * failed before its release does not wait: no tree of its job was
 * released either, each is being killed, and its failure must reach the
 * job's coordinator now.
 */
void crs_lineage_close(struct crs_lineage *l, bool released);

/* The keeper's loop, in the process made for it: never returns. */
void crs_lineage_keep(int listen_fd, int ready_fd) __attribute__((noreturn));

#endif /* CRDBG_CRS_LINEAGE_H */
