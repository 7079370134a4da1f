// SPDX-License-Identifier: GPL-2.0
/*
 * A Slurm job's process trees, for `crdbg checkpoint --job slurm:JOBID`:
 * its nodes from squeue and scontrol, and on each node (through a part
 * process, `crdbg-part tasks JOBID`) every task
 * slurmstepd started for it: a child of slurmstepd whose environment
 * names the job, in a step other than the one asking, and not crdbg
 * itself (a debug session's servers run in the job too). Each task is
 * one part, its rank SLURM_PROCID.
 *
 * A job whose launcher runs daemons on the nodes (Open MPI's mpirun and
 * its orteds, MPICH's mpiexec.hydra and its hydra_pmi_proxys, started
 * with srun inside the allocation) has one more part: the launcher's
 * tree on this host, found as the parent of an srun of the job, with
 * that srun as its agent (usr/crs/agent.h). The tasks are then the
 * daemons, each with its node's ranks below it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "parts.h"
#include "proc.h"

#define ENV_MAX (256 * 1024)

/* KEY's value in a NUL-separated environment block, or NULL. */
static const char *env_get(const char *env, size_t len, const char *key)
{
	size_t kl = strlen(key);

	for (size_t off = 0; off < len; off += strlen(env + off) + 1)
		if (!strncmp(env + off, key, kl) && env[off + kl] == '=')
			return env + off + kl + 1;
	return NULL;
}

static bool parent_is_slurmstepd(pid_t pid)
{
	struct crs_proc p;
	char comm[64];

	return !crs_proc_ids(pid, &p) && crs_proc_file(p.ppid, "comm", comm, sizeof(comm)) > 0 &&
	       !strncmp(comm, "slurmstepd", 10);
}

static bool is_crdbg(pid_t pid)
{
	char comm[64];

	return crs_proc_file(pid, "comm", comm, sizeof(comm)) > 0 && !strncmp(comm, "crdbg", 5);
}

int crs_slurm_local_tasks(const char *jobid, FILE *out)
{
	const char *my_step = getenv("SLURM_STEP_ID");
	char *env = malloc(ENV_MAX);
	struct dirent *d;
	DIR *dp;
	int found = 0;

	if (!env)
		return -ENOMEM;
	dp = opendir("/proc");
	if (!dp) {
		free(env);
		return -errno;
	}
	while ((d = readdir(dp))) {
		const char *job, *step, *rank;
		char line[JOB_PART_LINE_MAX + 1];
		struct job_part_msg m;
		pid_t pid;
		ssize_t n;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = (pid_t)atoi(d->d_name);
		if (pid == getpid() || !parent_is_slurmstepd(pid) || is_crdbg(pid))
			continue;
		n = crs_proc_file(pid, "environ", env, ENV_MAX);
		if (n <= 0)
			continue;
		job = env_get(env, (size_t)n, "SLURM_JOB_ID");
		step = env_get(env, (size_t)n, "SLURM_STEP_ID");
		rank = env_get(env, (size_t)n, "SLURM_PROCID");
		if (!job || strcmp(job, jobid) || (my_step && step && !strcmp(step, my_step)))
			continue;
		m = (struct job_part_msg){ .step = JOB_STEP_TASK, .task.pid = pid };
		snprintf(m.task.rank, sizeof(m.task.rank), "%s", rank && *rank ? rank : "-");
		if (job_part_msg_format(&m, line, sizeof(line)) < 0)
			continue;	/* a rank no task line can carry */
		fprintf(out, "%s\n", line);
		found++;
	}
	closedir(dp);
	free(env);
	fflush(out);
	return found;
}

/* The launchers whose daemons srun starts: the names of their executables. */
static const char *const launchers[] = {
	"orterun", "mpirun", "mpiexec", "mpirun.openmpi", "mpiexec.openmpi",
	"mpiexec.hydra", "mpirun.mpich", "mpiexec.mpich", "prterun",
};

static bool is_launcher(pid_t pid)
{
	char exe[4096];
	const char *base;

	if (crs_proc_exe(pid, exe, sizeof(exe)))
		return false;
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (!strcmp(base, launchers[i]))
			return true;
	return false;
}

/* pid is an srun of jobid. */
static bool srun_of_job(pid_t pid, const char *jobid, char *env)
{
	const char *job;
	char comm[64];
	ssize_t n;

	if (crs_proc_file(pid, "comm", comm, sizeof(comm)) <= 0 || strncmp(comm, "srun", 4) ||
	    (comm[4] && comm[4] != '\n'))
		return false;
	n = crs_proc_file(pid, "environ", env, ENV_MAX);
	job = n > 0 ? env_get(env, (size_t)n, "SLURM_JOB_ID") : NULL;
	return job && !strcmp(job, jobid);
}

/*
 * The job's launcher on this host, if its daemons were started by srun:
 * *t its part (its agents every srun of the job it started), 1; 0 for
 * none; -errno.
 */
static int find_launcher(const char *jobid, struct crs_job_target *t)
{
	char *env = malloc(ENV_MAX);
	pid_t launcher = 0;
	struct dirent *d;
	size_t len = 0;
	DIR *dp;

	if (!env)
		return -ENOMEM;
	dp = opendir("/proc");
	if (!dp) {
		free(env);
		return -errno;
	}
	memset(t, 0, sizeof(*t));
	while ((d = readdir(dp))) {
		struct crs_proc p;
		pid_t pid;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = (pid_t)atoi(d->d_name);
		if (!srun_of_job(pid, jobid, env) || crs_proc_ids(pid, &p) || p.ppid <= 1 ||
		    (launcher && p.ppid != launcher) || (!launcher && !is_launcher(p.ppid)))
			continue;
		/* a second launcher of the job is a second job's: the first is taken */
		if (len + 12 >= sizeof(t->agents))
			continue;
		launcher = p.ppid;
		len += (size_t)snprintf(t->agents + len, sizeof(t->agents) - len, "%s%d",
					len ? "," : "", (int)pid);
	}
	closedir(dp);
	free(env);
	if (!launcher)
		return 0;
	t->pid = launcher;
	snprintf(t->ranks, sizeof(t->ranks), "-");
	return 1;
}

static bool jobid_valid(const char *j)
{
	if (!*j || strlen(j) > 20)
		return false;
	for (; *j; j++)
		if (!isdigit((unsigned char)*j) && *j != '_' && *j != '+')
			return false;
	return true;
}

int crs_slurm_launcher_job(pid_t pid, char *jobid, size_t len)
{
	char *env;
	struct dirent *d;
	int found = 0;
	DIR *dp;

	if (!is_launcher(pid))
		return 0;
	env = malloc(ENV_MAX);
	dp = env ? opendir("/proc") : NULL;
	while (dp && !found && (d = readdir(dp))) {
		struct crs_proc p;
		pid_t child;
		ssize_t n;
		const char *job;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		child = (pid_t)atoi(d->d_name);
		if (crs_proc_ids(child, &p) || p.ppid != pid)
			continue;
		n = crs_proc_file(child, "environ", env, ENV_MAX);
		job = n > 0 ? env_get(env, (size_t)n, "SLURM_JOB_ID") : NULL;
		if (job && jobid_valid(job) && srun_of_job(child, job, env)) {
			snprintf(jobid, len, "%s", job);
			found = 1;
		}
	}
	if (dp)
		closedir(dp);
	free(env);
	return found;
}

/* The words a command prints, one a line (hostnames). */
static int read_words(const char *cmd, char ***ret, size_t *ret_n)
{
	char line[256], **w = NULL, **nw;
	size_t n = 0;
	FILE *p = popen(cmd, "r");

	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, " \n")] = 0;
		if (!line[0] || !crs_cid_valid(line))
			continue;
		nw = realloc(w, (n + 1) * sizeof(*w));
		if (!nw)
			break;
		w = nw;
		w[n] = strdup(line);
		if (w[n])
			n++;
	}
	pclose(p);
	*ret = w;
	*ret_n = n;
	return 0;
}


int crs_slurm_job_targets(const char *jobid, const struct crs_job_opts *o,
			  struct crs_job_target **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct crs_job_target *t = NULL, *nt;
	struct job_part *ps = NULL;
	char cmd[256], tmpl[256], **nodes = NULL, name[160];
	size_t nn = 0, n = 0, i;
	int r;

	if (!jobid_valid(jobid))
		return crs_fail(err, errlen, -EINVAL, "\"%s\" is not a Slurm job id", jobid);
	snprintf(cmd, sizeof(cmd),
		 "scontrol show hostnames \"$(squeue -h -j %s -o %%N 2>/dev/null)\" 2>/dev/null",
		 jobid);
	r = read_words(cmd, &nodes, &nn);
	if (r || !nn) {
		r = crs_fail(err, errlen, r ? r : -ESRCH,
			     "Slurm job %s has no nodes (not running, or squeue cannot see it)",
			     jobid);
		goto out;
	}
	ps = calloc(nn, sizeof(*ps));
	if (!ps) {
		r = -ENOMEM;
		goto out;
	}
	snprintf(tmpl, sizeof(tmpl), "exec srun --overlap --jobid=%s -w {host} -N1 -n1 --quiet {cmd}",
		 jobid);
	signal(SIGPIPE, SIG_IGN);
	job_parts_init(ps, nn, NULL);
	for (i = 0; i < nn; i++) {
		char *argv[] = { JOB_PART_PROGRAM, "tasks", (char *)jobid, NULL };

		ps[i].index = i;
		r = job_part_start(&ps[i], nodes[i], o->launch ? o->launch : tmpl, argv, err,
				   errlen);
		if (r)
			goto out_parts;
	}
	/* Each reports its tasks on stdout; job_parts_finish() collects them. */
	job_parts_finish(ps, nn, o->log, o->timeout_s > 0 ? o->timeout_s : 60);
	for (i = 0; i < nn; i++) {
		if (ps[i].status != 0) {
			r = crs_fail(err, errlen, -EIO, "cannot list the tasks on %s: %s",
				     job_part_name(&ps[i], name, sizeof(name)),
				     ps[i].last_err[0] ? ps[i].last_err : "failed");
			goto out_parts;
		}
		for (size_t k = 0; k < ps[i].nr_tasks; k++) {
			const struct job_part_task *task = &ps[i].tasks[k];

			nt = realloc(t, (n + 1) * sizeof(*t));
			if (!nt) {
				r = -ENOMEM;
				goto out_parts;
			}
			t = nt;
			memset(&t[n], 0, sizeof(t[n]));
			snprintf(t[n].node, sizeof(t[n].node), "%s", nodes[i]);
			snprintf(t[n].ranks, sizeof(t[n].ranks), "%s", task->rank);
			t[n].pid = task->pid;
			n++;
		}
	}
	if (!n) {
		r = crs_fail(err, errlen, -ESRCH, "Slurm job %s has no tasks on its %zu node%s",
			     jobid, nn, nn == 1 ? "" : "s");
		goto out_parts;
	}
	nt = realloc(t, (n + 1) * sizeof(*t));
	if (!nt) {
		r = -ENOMEM;
		goto out_parts;
	}
	t = nt;
	r = find_launcher(jobid, &t[n]);
	if (r < 0)
		goto out_parts;
	if (r) {
		/* the tasks are its daemons: their SLURM_PROCID is no rank */
		for (i = 0; i < n; i++)
			snprintf(t[i].ranks, sizeof(t[i].ranks), "-");
		n++;
	}
	*ret = t;
	*ret_n = n;
	t = NULL;
	r = 0;
out_parts:
	for (i = 0; i < nn; i++)
		free(ps[i].tasks);
out:
	free(ps);
	free(t);
	for (i = 0; i < nn; i++)
		free(nodes[i]);
	free(nodes);
	return r;
}

int crs_job_allocation_check(const struct crs_job *j, const struct crs_job_opts *o, char *err,
			     size_t errlen)
{
	const char *job = getenv("SLURM_JOB_ID"), *list = getenv("SLURM_JOB_NODELIST");
	char host[CRS_NODE_MAX] = "", **nodes = NULL;
	size_t nn = 0, i, k;
	int r = 0;

	if (o->transport || o->launch || !job || !*job || !list || !*list)
		return 0;
	/* the shell expands the variable: its value is never command text */
	if (read_words("scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null", &nodes, &nn) ||
	    !nn)
		goto out;	/* cannot tell: each part's srun says */
	gethostname(host, sizeof(host) - 1);
	for (i = 0; !r && i < j->nr_parts; i++) {
		const char *node = j->parts[i].node;

		for (k = 0; k < nn && strcmp(nodes[k], node); k++)
			;
		if (k == nn && strcmp(node, host))
			r = crs_fail(err, errlen, -EHOSTUNREACH,
				     "restart of %s refused, nothing was restored: part %zu (ranks %s) was checkpointed on %s, which is not a node of this allocation (Slurm job %s: %s): restart it in an allocation of the job's nodes",
				     j->handle, i, j->parts[i].ranks, node, job, list);
	}
out:
	for (i = 0; i < nn; i++)
		free(nodes[i]);
	free(nodes);
	return r;
}
