/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Job checkpoints: one handle for a checkpoint of a whole parallel job
 * whose parts (one process tree each, on any node) are ordinary
 * checkpoints of <crdbg/crs.h>. Documentation/checkpoint.md ("The job
 * checkpoint protocol") describes the manifest, the cut and the restart
 * barrier.
 *
 * The computation id (CID) names one job checkpoint: every part
 * records it with the number of parts and its own index (the metadata's
 * "cid" record), and a restart releases nothing until every counted part
 * came back with the CID the coordinator adopted.
 *
 * A manifest lives in the store as <root>/.jobs/<handle> (never listed
 * as a checkpoint): the job, its CID, and for every part its node, the
 * ranks it holds, its handle and the SHA-256 of its metadata file, which
 * seals the part's image digests, then its parent, size, root pid and
 * terminal. Text, one
 * record a line, sealed by an "end SHA256" line like the metadata.
 */
#ifndef CRDBG_JOB_H
#define CRDBG_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <crdbg/crs.h>
#include <crdbg/job-part.h>

#define CRS_JOB_FORMAT		1
#define CRS_JOB_DIR		".jobs"
#define CRS_JOB_MAX_PARTS	4096
#define CRS_JOB_MAX_BYTES	(4u << 20)
#define CRS_NODE_MAX		64
#define CRS_RANKS_MAX		256
#define CRS_TTY_MAX		32
#define CRS_AGENTS_MAX		96	/* "PID,PID...": a launcher's agents */

struct crs_job_part {
	char node[CRS_NODE_MAX];	/* host name the part runs and is stored on */
	char ranks[CRS_RANKS_MAX];	/* "0-1,4" (display form), "-" if not known */
	char handle[CRS_HANDLE_MAX];
	uint8_t meta_sha[32];		/* SHA-256 of the part's metadata file */
	/*
	 * The part's incremental parent ("" for a full image) and the bytes
	 * its own images take: what a reader on another node cannot look up
	 * in a node-local store (list, the console's timeline). Manifests
	 * written before they were recorded load with "" and 0.
	 */
	char parent[CRS_HANDLE_MAX];
	uint64_t bytes;
	/* Root of the part's tree, which a restart gives the same pid (0: not recorded). */
	int pid;
	/*
	 * The terminal the part's tree held its session on (a pty whose
	 * master was outside the tree): its path when checkpointed, "" for
	 * none, and its st_rdev and st_dev. A restart gives every terminal
	 * of the job a terminal of its own (crdbg restart JOB --join).
	 * Manifests written before it was recorded load with "".
	 */
	char tty[CRS_TTY_MAX];
	uint64_t tty_rdev, tty_dev;
	/*
	 * The launcher's agents in the part's tree ("PID,PID", "" for none):
	 * the srun or ssh that its launcher (mpirun, mpiexec) started for the
	 * daemons that are the job's other parts. A restart traps them and
	 * ends them once every other part has ended (usr/crs/agent.h).
	 */
	char agents[CRS_AGENTS_MAX];
};

struct crs_job {
	char handle[CRS_HANDLE_MAX];
	char cid[CRS_CID_MAX];
	int64_t time;
	char what[256];			/* the job: "slurm 42", "pid 1234 (mpirun)", ... */
	/* whose job checkpoint it is (the "owner" record; absent: root's), as in crs_meta */
	bool has_owner;
	uid_t owner_uid;
	gid_t owner_gid;
	size_t nr_parts;
	struct crs_job_part *parts;
};

void crs_job_init(struct crs_job *j);
void crs_job_free(struct crs_job *j);
int crs_job_add_part(struct crs_job *j, const struct crs_job_part *p);

/*
 * The roots of part k's node's other parts, "PID,PID,..." or "-" for
 * none (malloc'd; NULL: out of memory): a group led from outside part
 * k's tree comes back only if one of them leads it (srun's tasks are in
 * their node's first task's group). As long as the node has parts.
 */
char *crs_job_node_roots(const struct crs_job *j, size_t k);

/* A CID or node name: 1..63 of [A-Za-z0-9._-]. */
bool crs_cid_valid(const char *cid);

/* A terminal's path as a manifest holds it: "/dev/" and [A-Za-z0-9/._-], short. */
bool crs_tty_path_valid(const char *path);

/* "RDEV:DEV:PATH" (hex, as CRIU names a tty) or "-" into p's tty fields. */
int crs_job_tty_parse(const char *s, struct crs_job_part *p);

/* A fresh CID, "<host>-<pid>-<unix ns>" (unique per computation). */
int crs_cid_new(char *buf, size_t len);

/* Manifest text (malloc'd) and its parser; the parser accepts any bytes. */
int crs_job_format(const struct crs_job *j, char **ret_buf, size_t *ret_len);
int crs_job_parse(const char *buf, size_t len, struct crs_job *j, char *err, size_t errlen);

/* A handle names a job checkpoint of this store. */
bool crs_job_exists(const char *root, const char *handle);

/*
 * Whether root can hold this caller's job checkpoints: always for root;
 * for a user (whose parts the node's service takes), a directory of the
 * user's own that no one else may write, never the node's store, whose
 * manifests only root writes. 0, or -EPERM/-errno with one line in err.
 */
int crs_job_store_check(const char *root, char *err, size_t errlen);

/* Write a new manifest (handle "job-<UTC stamp>-<pid>[.n]" into j->handle). */
int crs_job_save(const char *root, struct crs_job *j, char *err, size_t errlen);
int crs_job_load(const char *root, const char *handle, struct crs_job *j, char *err,
		 size_t errlen);
int crs_job_remove_manifest(const char *root, const char *handle);

/* Every job checkpoint, sorted by handle; fn gets NULL job if unreadable. */
typedef void (*crs_job_list_fn)(const char *handle, const struct crs_job *j,
				const char *problem, void *arg);
int crs_job_list(const char *root, crs_job_list_fn fn, void *arg);

/* The job manifest naming handle as one of its parts ("" if none). */
int crs_job_owning(const char *root, const char *part_handle, char *job, size_t len);

/*
 * The coordinators (usr/job/checkpoint.c, restart.c). Each part
 * is a `crdbg-part checkpoint|restart ...` process on its node, started
 * here (its node is this host) or through a launch template ("ssh {host}
 * {cmd}"; inside a Slurm allocation the default is srun --overlap), and
 * driven through its stdin and stdout, one message a line
 * (<crdbg/job-part.h>, checkpoint.md);
 * or, with a transport, by whoever the transport asks (a debug session's
 * servers).
 */
/*
 * Until its last order, a part sends its alive step every
 * CRS_PART_BEAT_S seconds. A lost node sends no end of file through srun
 * or ssh for as long as the launcher takes to notice (Slurm: SlurmdTimeout,
 * 300 s by default) while the job's other parts keep their trees frozen,
 * or held: a part that beat once and then says nothing for
 * CRS_PART_SILENCE_S is taken as lost, and the job's checkpoint or
 * restart is called off at once.
 */
#define CRS_PART_BEAT_S		2
#define CRS_PART_SILENCE_S	20

struct crs_job_target {
	char node[CRS_NODE_MAX];	/* "" or this host: started here */
	char ranks[CRS_RANKS_MAX];	/* "-" if not known */
	pid_t pid;			/* root of the part's process tree */
	char agents[CRS_AGENTS_MAX];	/* as crs_job_part's */
};

/*
 * Another way to the parts than processes started here or through a
 * launch template: the console's SDM servers (usr/console/parts-sdm.c),
 * each running its own node's parts. Parts are numbered as in the job;
 * wait and finish fill rep[part] for every part started.
 */
struct crs_part_report {
	struct job_part_msg msg;	/* its last step (<crdbg/job-part.h>); UNSPEC: none */
	char why[JOB_PART_WHY_MAX];	/* why it failed or ended, "" if it did not say */
	bool over;		/* it ended, or cannot be reached: no more steps */
	int status;		/* its exit status once known, else -1 */
};

struct crs_job_transport {
	/* Start part (argv[0] is ignored: crdbg) for ranks on node. 0 or -errno and err. */
	int (*start)(void *arg, size_t part, const char *node, const char *ranks,
		     char *const argv[], char *err, size_t errlen);
	/* An order to every part started and not over. */
	void (*send)(void *arg, enum job_part_order order);
	/* Until every part not over reached step, or timeout_s: 0 or -ETIMEDOUT. */
	int (*wait)(void *arg, enum job_part_step step, int timeout_s,
		    struct crs_part_report *rep, size_t n);
	/*
	 * No more orders: wait up to grace_s for each part to end (then it
	 * is killed); grace_s 0: they run on (a released restart).
	 */
	void (*finish)(void *arg, int grace_s, struct crs_part_report *rep, size_t n);
	void *arg;
};

struct crs_job_opts {
	const char *store;
	const char *launch;		/* template for other nodes, or NULL */
	const struct crs_job_transport *transport;	/* NULL: processes */
	enum freeze_backend_kind backend;
	int timeout_s;			/* for each step of every part */
	FILE *log;			/* the parts' messages, one line each */
	bool verbose;
	/* checkpoint */
	const char *what;		/* the job, for the manifest */
	bool kill;			/* end the job once every part is stored */
	bool debug;			/* checkpoint --debug / restart --debug */
	bool full;			/* checkpoint --full: no part is incremental */
	bool no_pre_dump;		/* checkpoint --no-pre-dump, for every part */
	/* restart */
	const char *handle;
};

/* Checkpoint every target at one cut; the job handle into ret_handle. */
int crs_job_checkpoint(const struct crs_job_opts *o, const struct crs_job_target *t, size_t nr,
		       char *ret_handle, size_t handle_len, char *err, size_t errlen);

/* Restore every part, release them together, wait: *ret_status as crs_restart. */
int crs_job_restart(const struct crs_job_opts *o, int *ret_status, char *err, size_t errlen);

/*
 * `crdbg restart JOB --join N`: run the parts of the job's terminal N
 * (numbered by the restart, which names them and waits) on our own
 * terminal, speaking for them to the restart through its door
 * (usr/job/join.h). *ret_status as crs_job_restart.
 */
int crs_job_join(const struct crs_job_opts *o, unsigned int group, int *ret_status, char *err,
		 size_t errlen);

/* Verify every part on its node (crdbg-part verify); 0 when all are intact. */
int crs_job_verify(const struct crs_job_opts *o, char *err, size_t errlen);

/* Remove every part on its node, then the manifest. */
int crs_job_remove(const struct crs_job_opts *o, char *err, size_t errlen);

/*
 * A restart of j inside a Slurm allocation whose parts go through srun
 * (no --launch, no session's servers): every part's node must be one of
 * the allocation's ($SLURM_JOB_NODELIST) or this host. 0, or -EHOSTUNREACH
 * with one line naming the first part whose node is not, before anything
 * is started.
 */
int crs_job_allocation_check(const struct crs_job *j, const struct crs_job_opts *o, char *err,
			     size_t errlen);

/*
 * A Slurm job's tasks, one target each (usr/job/slurm.c): its nodes
 * from squeue, the tasks on each through `crdbg-part tasks
 * JOBID` run there (o->launch, default srun --overlap --jobid=JOBID).
 */
int crs_slurm_job_targets(const char *jobid, const struct crs_job_opts *o,
			  struct crs_job_target **ret, size_t *ret_n, char *err, size_t errlen);

/*
 * pid is a launcher (mpirun, mpiexec.hydra) whose daemons run on the
 * nodes through an srun of a Slurm job: 1 and that job's id in jobid
 * (checkpointed whole, as --job slurm:JOBID), else 0.
 */
int crs_slurm_launcher_job(pid_t pid, char *jobid, size_t len);

/* This node's tasks of the job, "crdbg-part task pid=P rank=R" lines; their count. */
int crs_slurm_local_tasks(const char *jobid, FILE *out);

/*
 * A part of a job restart whose checkpoint (root/handle) holds TCP
 * connections drops its node's outgoing TCP resets until the release, so
 * a connection that reaches a peer not restored yet is not reset
 * (usr/job/rstguard.c). *guarded says whether it did; -1 with err
 * when it could not (nftables missing).
 */
int crs_job_rst_guard(const char *root, const char *handle, bool *guarded, char *err,
		      size_t errlen);
void crs_job_rst_unguard(void);

#endif /* CRDBG_JOB_H */
