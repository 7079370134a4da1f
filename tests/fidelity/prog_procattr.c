// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process attributes: cwd (DIR/sub dir), umask 027, resource limits
 * (NOFILE, CORE, STACK, DATA, CPU, MEMLOCK, NPROC, MSGQUEUE), nice 5,
 * the process name, PR_SET_PDEATHSIG, PR_SET_DUMPABLE off. After the
 * word each is as set. (no_new_privs and the personality: prog_prctl.c.)
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/stat.h>

#include "fidelity.h"

static const struct {
	int res;
	const char *name;
	rlim_t cur, max;
} limits[] = {
	{ RLIMIT_NOFILE, "NOFILE", 200, 300 },
	{ RLIMIT_CORE, "CORE", 0, 1 << 20 },
	{ RLIMIT_STACK, "STACK", 4 << 20, RLIM_INFINITY },
	{ RLIMIT_DATA, "DATA", 1ul << 34, 1ul << 35 },
	{ RLIMIT_CPU, "CPU", 3600, 7200 },
	{ RLIMIT_MEMLOCK, "MEMLOCK", 1 << 16, 1 << 17 },
	{ RLIMIT_NPROC, "NPROC", 5000, 6000 },
	{ RLIMIT_MSGQUEUE, "MSGQUEUE", 1 << 15, 1 << 16 },
};
#define NLIM (sizeof(limits) / sizeof(limits[0]))

int main(int argc, char **argv)
{
	char want_cwd[4200], cwd[4200] = "", name[16] = "";
	int i, sig = 0;
	struct rlimit rl;
	mode_t um;

	fid_init(argc, argv);
	snprintf(want_cwd, sizeof(want_cwd), "%s/sub dir", fid_dir);
	if (mkdir(want_cwd, 0755) || chdir(want_cwd))
		fid_die("cwd: %s", strerror(errno));
	umask(027);
	for (i = 0; i < (int)NLIM; i++) {
		rl.rlim_cur = limits[i].cur;
		rl.rlim_max = limits[i].max;
		if (setrlimit(limits[i].res, &rl))
			fid_die("setrlimit %s: %s", limits[i].name, strerror(errno));
	}
	/*
	 * Ignored: raw CRIU's detached restore (the control) ends with the
	 * restoring parent's exit, which sends the parent-death signal.
	 */
	signal(SIGUSR2, SIG_IGN);
	if (setpriority(PRIO_PROCESS, 0, 5) || prctl(PR_SET_NAME, "fid-attrs") ||
	    prctl(PR_SET_PDEATHSIG, SIGUSR2) || prctl(PR_SET_DUMPABLE, 0))
		fid_die("set-up: %s", strerror(errno));
	fid_ready_wait();

	FID_CHECK(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, want_cwd), "cwd '%s'", cwd);
	um = umask(0);
	FID_CHECK(um == 027, "umask %03o", um);
	for (i = 0; i < (int)NLIM; i++)
		FID_CHECK(!getrlimit(limits[i].res, &rl) && rl.rlim_cur == limits[i].cur &&
			  rl.rlim_max == limits[i].max, "RLIMIT_%s %llu/%llu", limits[i].name,
			  (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	errno = 0;
	i = getpriority(PRIO_PROCESS, 0);
	FID_CHECK(i == 5 && !errno, "nice %d", i);
	prctl(PR_GET_NAME, name);
	FID_CHECK(!strcmp(name, "fid-attrs"), "name '%s'", name);
	prctl(PR_GET_PDEATHSIG, &sig);
	FID_CHECK(sig == SIGUSR2, "parent-death signal %d", sig);
	FID_CHECK(prctl(PR_GET_DUMPABLE) == 0, "dumpable again");
	fid_finish();
}
