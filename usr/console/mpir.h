/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPIR process acquisition (mpir.c): a job's ranks found through its
 * mpirun, which runs (or is attached to) under a gdb of the console's.
 * The part registers with the session: it forwards mpirun's output (the
 * ranks write through it) and, when the session ends, kills a job it
 * launched or leaves an attached one running.
 */
#ifndef CRDBG_CONSOLE_MPIR_H
#define CRDBG_CONSOLE_MPIR_H

#include <stdbool.h>
#include <stddef.h>

struct dbg_session;
struct sdm_idset;
struct dbg_mpir;

/* A new MPIR part of s, registered with it. NULL on ENOMEM or ENOSPC. */
struct dbg_mpir *dbg_mpir_new(struct dbg_session *s);
/* After dbg_session_stop(). Accepts NULL. */
void dbg_mpir_free(struct dbg_mpir *m);

/*
 * Run mpirun (argv) under our gdb, or attach to the running mpirun_pid
 * (argv NULL); read MPIR_proctable; start the session with one server per
 * rank and attach each rank's gdb. Prints the attach result. With the
 * session's preload set the job is made checkpointable. 0 or -errno with
 * err set.
 */
int dbg_mpir_start(struct dbg_mpir *m, char *const *argv, int mpirun_pid,
		   const char *bindir, char *err, size_t errlen);

/* Whether we started the job (else crdbg attach joined it). */
bool dbg_mpir_launched(const struct dbg_mpir *m);
/* mpirun's pid (the original, or its restored copy). */
int dbg_mpir_pid(const struct dbg_mpir *m);

/*
 * input TEXT: to mpirun's stdin, which it forwards to rank 0 (set: the
 * ranks named, or NULL). Refused for an attached job.
 */
void dbg_mpir_input(struct dbg_mpir *m, const struct sdm_idset *set, const char *text);

/*
 * Whether the ranks live outside the launcher's process tree (srun's
 * tasks are slurmstepd's children; ranks on other nodes): a checkpoint
 * then takes each rank as a part of a job checkpoint, on its node, and
 * *launch is the template ("... {host} ... {cmd}") that starts a command
 * on a node of the job, or NULL when every rank is on this host.
 */
bool dbg_mpir_ranks_apart(const struct dbg_mpir *m, const char **launch);

/*
 * A restart of such ranks killed the launcher for good (it is no part of
 * their job checkpoint): input has nowhere to go, the restored rank 0
 * reads /dev/null (a part stands it in for the launcher's stdin pipe).
 */
void dbg_mpir_launcher_gone(struct dbg_mpir *m);

/*
 * Why the job's ranks cannot be restored as the parts of a job
 * checkpoint in this session, or NULL: the launcher is killed first, and
 * an srun that made its own allocation takes it, and the session's
 * servers in it, along.
 */
const char *dbg_mpir_restart_problem(const struct dbg_mpir *m);

/*
 * For a restart: mpirun stopped in our gdb, so that it never sees its
 * ranks end (true if it is), and then killed by our gdb, which reaps it.
 */
bool dbg_mpir_hold(struct dbg_mpir *m);
void dbg_mpir_kill(struct dbg_mpir *m);

/*
 * For a checkpoint of the whole job: stop mpirun in our gdb and detach
 * (CRIU cannot take a traced process), and attach again afterwards, to
 * the same pid (the original, or its restored copy). 0 or -errno, err set.
 */
int dbg_mpir_detach(struct dbg_mpir *m, char *err, size_t errlen);
int dbg_mpir_reattach(struct dbg_mpir *m, char *err, size_t errlen);

#endif /* CRDBG_CONSOLE_MPIR_H */
