// SPDX-License-Identifier: GPL-2.0
/*
 * The console where real programs put their code: in shared libraries
 * loaded after the ranks were acquired (a breakpoint there is pending,
 * then resolved rank by rank), stripped (frames without a name), and
 * ranks that cannot stop by themselves because they wait for one at a
 * breakpoint (the group is stopped). prog_late is two copies: rank 0
 * dlopen()s a library once main runs, rank 1 waits on a FIFO for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "console_run.h"

#ifndef PROG_LATE
#define PROG_LATE "build/tests/debug/prog_late"
#endif
#ifndef LATE_LIB
#define LATE_LIB "build/tests/debug/late_lib.so"
#endif
#ifndef LATE_LIB_STRIPPED
#define LATE_LIB_STRIPPED "build/tests/debug/late_lib_stripped.so"
#endif
#ifndef MPI_JOBS
#define MPI_JOBS "build/tests/debug/mpi_jobs"
#endif

FIXTURE(late) {
	struct run r;
};

FIXTURE_SETUP(late)
{
	if (!have_gdb())
		SKIP(return, "gdb is not installed");
	if (access(CRDBG, X_OK) || access(PROG_LATE, X_OK))
		SKIP(return, "%s or %s not built", CRDBG, PROG_LATE);
}

FIXTURE_TEARDOWN(late)
{
	run_free(&self->r);
}

/* debug() of args, its seconds in *ret_s. */
static int timed_debug(struct run *r, const char *const *args, double *ret_s)
{
	struct timespec t0, t1;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = debug(r, args);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ret_s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return rc;
}

/*
 * crdbg debug -n 2 of prog_late with script: rank 0 loads library once
 * it runs, rank 1 waits on a FIFO for what rank 0 computes there. Exit
 * status of the session; its seconds in *ret_s.
 */
static int late_session(struct __test_metadata *_metadata, struct run *r,
			const char *library, const char *script, double *ret_s)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX", fifo[] = "/tmp/crdbg-late-XXXXXX";
	char *lib = realpath(library, NULL);
	const char *a[] = { "-n", "2", "--batch", path, PROG_LATE, lib, fifo, NULL };
	int fd, rc;

	if (!lib || access(PROG_LATE, X_OK)) {
		free(lib);
		return -1;
	}
	fd = mkstemp(fifo);
	if (fd >= 0) {
		close(fd);
		unlink(fifo);	/* the program makes it a FIFO */
	}
	if (write_script(path, script)) {
		free(lib);
		return -1;
	}
	rc = timed_debug(r, a, ret_s);
	unlink(path);
	unlink(fifo);
	free(lib);
	TH_LOG("session: %.1f s", *ret_s);
	return rc;
}

/*
 * A breakpoint on a function of a library no rank has loaded yet is
 * pending, not an error, and says so; it resolves in the rank that loads
 * the library (rank 0 stops there) and stays pending in the other, which
 * info breakpoints shows per rank set. status -p names it by the
 * console's number, as the stop did, not by gdb's (3 there: gdb's 1 is
 * the start's main, 2 the exit point).
 */
TEST_F_TIMEOUT(late, late_library_breakpoint_pending_then_resolved, 180)
{
	static const char script[] =
		"break late_work\n"
		"info breakpoints\n"
		"timeout 30\n"
		"continue\n"
		"info breakpoints\n"
		"status -p\n"
		"delete\n"
		"continue\n";
	double secs;
	const char *out;

	ASSERT_EQ(0, late_session(_metadata, &self->r, LATE_LIB, script, &secs))
		TH_LOG("%s", self->r.buf);
	out = self->r.buf;
	EXPECT_NE(NULL, strstr(out, "\n[0-1]: breakpoint 2 (late_work) pending\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n\tpending on [0-1] (no library loaded there has it yet)\n"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0\\]: stopped: breakpoint 2, late_work at .*late_lib\\.c:[0-9]+$"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n\tpending on [1] (no library loaded there has it yet), "
			       "resolved on [0]\n"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^0 +stopped +[0-9]+ +[0-9]+ +stopped: breakpoint 2, late_work at "))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "breakpoint 3")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-1]: exited: code 0\n")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "error")) TH_LOG("%s", out);
}

/*
 * Rank 0 at a breakpoint, rank 1 blocked reading what rank 0 has not
 * sent: rank 1 cannot stop by itself. Each continue reports rank 0's stop
 * at once, stops rank 1 (stopall on, the default: the group) and gives
 * the prompt back, long before the 30 s timeout; break then works on
 * every rank. bt 1 prints one frame and says more follow.
 */
TEST_F_TIMEOUT(late, breakpoint_stops_the_group, 180)
{
	static const char script[] =
		"break late_work\n"
		"timeout 30\n"
		"continue\n"
		"[0] bt 1\n"
		"continue\n"
		"break main\n"
		"status\n"
		"delete\n"
		"continue\n";
	double secs;
	const char *out;

	ASSERT_EQ(0, late_session(_metadata, &self->r, LATE_LIB, script, &secs))
		TH_LOG("%s", self->r.buf);
	out = self->r.buf;
	EXPECT_EQ(2, count(out, "\n[0]: stopped: breakpoint 2, late_work at ")) TH_LOG("%s", out);
	EXPECT_EQ(2, count(out, "\nstopping the other ranks [1] (stopall off leaves them running)\n"
			   "[1]: stopped: signal SIGINT, ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1] rank 1 got 1\n")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0\\]: #0  late_work at .*late_lib\\.c:[0-9]+$")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0]: (More stack frames follow...)\n(crdbg) continue\n"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0-1\\]: breakpoint 3 at .*prog_late\\.c:[0-9]+$"))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "\n[1]: running")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-1]: exited: code 0\n")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "error")) TH_LOG("%s", out);
}

/*
 * stopall off: the stop at the breakpoint is reported and the continue
 * returns at once, rank 1 left running (blocked); interrupt then stops
 * it, and the job ends normally.
 */
TEST_F_TIMEOUT(late, stopall_off_returns_with_the_others_running, 180)
{
	static const char script[] =
		"stopall off\n"
		"break late_work\n"
		"timeout 30\n"
		"continue\n"
		"status\n"
		"[1] interrupt\n"
		"delete\n"
		"continue\n";
	double secs;
	const char *out;

	ASSERT_EQ(0, late_session(_metadata, &self->r, LATE_LIB, script, &secs))
		TH_LOG("%s", self->r.buf);
	out = self->r.buf;
	EXPECT_NE(NULL, strstr(out, "\n[0]: stopped: breakpoint 2, late_work at ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1] run on (stopall off): their stops are reported when "
			       "they come\n[1]: running\n"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[1\\] +running *$")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1]: stopped: signal SIGINT, ")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "stopping the other ranks")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-1]: exited: code 0\n")) TH_LOG("%s", out);
}

/*
 * A frame of a stripped library that no symbol names (late_square(), a
 * static function): bt and stacks show it as the library and its file
 * offset, never "??".
 */
TEST_F_TIMEOUT(late, stripped_frames_are_module_and_offset, 180)
{
	static const char script[] =
		"break getppid\n"
		"continue\n"
		"[0] stacks\n"
		"[0] bt\n"
		"delete\n"
		"continue\n";
	double secs;
	const char *out;

	ASSERT_EQ(0, late_session(_metadata, &self->r, LATE_LIB_STRIPPED, script, &secs))
		TH_LOG("%s", self->r.buf);
	out = self->r.buf;
	EXPECT_TRUE(has_line(out, "^\\[0\\]: stopped: breakpoint 2, (__GI_)?getppid"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^ *\\[0\\] late_lib_stripped\\.so\\+0x[0-9a-f]+$"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0\\]: #[0-9]+ +late_lib_stripped\\.so\\+0x[0-9a-f]+$"))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "??")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-1]: exited: code 0\n")) TH_LOG("%s", out);
}

/*
 * The same under Open MPI's mpirun: rank 0 at a breakpoint its ranks 1
 * and 2 do not have, while they wait for it in MPI_Barrier. Each of the
 * three continues to rank 0's next stop stops them there and comes back
 * (never waiting out its 60 s), and the job ends as it would alone.
 */
TEST_F_TIMEOUT(late, mpi_barrier_waiters_are_stopped_with_the_group, 300)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"[0] break step\n"
		"timeout 60\n"
		"continue\n"
		"status\n"
		"continue\n"
		"continue\n"
		"delete\n"
		"continue\n";
	const char *a[] = { "--batch", path, "--", "mpirun", "--oversubscribe", "-n", "3",
			    MPI_JOBS, NULL };
	const char *out;
	double secs;

	if (!have_mpi() || access(MPI_JOBS, X_OK))
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_JOBS);
	mpi_env();
	ASSERT_EQ(0, write_script(path, script));
	EXPECT_EQ(0, timed_debug(&self->r, a, &secs)) TH_LOG("%s", self->r.buf);
	unlink(path);
	TH_LOG("session: %.1f s", secs);
	out = self->r.buf;
	EXPECT_EQ(3, count(out, "\n[0]: stopped: breakpoint 1, step at ")) TH_LOG("%s", out);
	EXPECT_LE(1, count(out, "\nstopping the other ranks [1-2] (stopall off leaves them running)\n"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[1-2\\] +stopped +signal SIGINT, ")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, ": running\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "[2] rank 2 total 63\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-2]: exited: code 0\n")) TH_LOG("%s", out);
}

#ifndef HPCC
#define HPCC "/usr/bin/hpcc"
#endif

/* A new directory dir (a mkdtemp() template) holding name with text. */
static int input_dir(char *dir, const char *name, const char *text, char *ret_path,
		     size_t size)
{
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(ret_path, size, "%s/%s", dir, name);
	f = fopen(ret_path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/* rm -rf dir, as the program left it. */
static int remove_dir(const char *dir)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/*
 * HPC Challenge's input for a run of seconds: N = 100, NB = 32, a 1 x 2
 * process grid (Debian's sample otherwise).
 */
static const char hpccinf[] =
		"HPLinpack benchmark input file\n"
		"Innovative Computing Laboratory, University of Tennessee\n"
		"HPL.out      output file name (if any)\n"
		"8            device out (6=stdout,7=stderr,file)\n"
		"1            # of problems sizes (N)\n"
		"100          Ns\n"
		"1            # of NBs\n"
		"32           NBs\n"
		"0            PMAP process mapping (0=Row-,1=Column-major)\n"
		"1            # of process grids (P x Q)\n"
		"1            Ps\n"
		"2            Qs\n"
		"16.0         threshold\n"
		"1            # of panel fact\n"
		"2            PFACTs (0=left, 1=Crout, 2=Right)\n"
		"1            # of recursive stopping criterium\n"
		"4            NBMINs (>= 1)\n"
		"1            # of panels in recursion\n"
		"2            NDIVs\n"
		"1            # of recursive panel fact.\n"
		"1            RFACTs (0=left, 1=Crout, 2=Right)\n"
		"1            # of broadcast\n"
		"1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)\n"
		"1            # of lookahead depth\n"
		"1            DEPTHs (>=0)\n"
		"2            SWAP (0=bin-exch,1=long,2=mix)\n"
		"64           swapping threshold\n"
		"0            L1 in (0=transposed,1=no-transposed) form\n"
		"0            U  in (0=transposed,1=no-transposed) form\n"
		"1            Equilibration (0=no,1=yes)\n"
		"8            memory alignment in double (> 0)\n"
		"##### This line (no. 32) is ignored (it serves as a separator). ######\n"
		"0                      \t\tNumber of additional problem sizes for PTRANS\n"
		"1200 10000 30000        \tvalues of N\n"
		"0                       \tnumber of additional blocking sizes for PTRANS\n"
		"40 9 8 13 13 20 16 32 64       \tvalues of NB\n";

/*
 * Debian's hpcc (stripped, BLAS in a library) on 2 ranks, as a user
 * tries it: break dgemm_, continue twice. Wherever one rank stops in
 * dgemm_ while the other waits for it in MPI, the other is stopped and
 * the prompt comes back at once (it waited out 120 s, and break then
 * said "the program is running"); the run then ends as it would alone.
 */
TEST_F_TIMEOUT(late, hpcc_dgemm_stops_the_group, 600)
{
	char dir[] = "/tmp/crdbg-hpcc-XXXXXX", inf[64], path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"break dgemm_\n"
		"timeout 60\n"
		"continue\n"
		"continue\n"
		"status\n"
		"break MPI_Wtime\n"
		"delete\n"
		"timeout 0\n"
		"continue\n";
	const char *a[] = { "--batch", path, "--", "mpirun", "--oversubscribe", "-n", "2",
			    "--wdir", dir, HPCC, NULL };
	const char *out;
	double secs;

	if (!have_mpi() || access(HPCC, X_OK))
		SKIP(return, "no mpirun or no %s (Debian's hpcc)", HPCC);
	mpi_env();
	ASSERT_EQ(0, input_dir(dir, "hpccinf.txt", hpccinf, inf, sizeof(inf)));
	ASSERT_EQ(0, write_script(path, script));
	EXPECT_EQ(0, timed_debug(&self->r, a, &secs)) TH_LOG("%s", self->r.buf);
	unlink(path);
	TH_LOG("session: %.1f s", secs);
	out = self->r.buf;
	EXPECT_TRUE(has_line(out, "^\\[[0-1-]+\\]: stopped: breakpoint 1, dgemm_$")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-1]: breakpoint 2 ")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "the program is running")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, ": running\n")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "??")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-1]: exited: code 0\n")) TH_LOG("%s", out);
	EXPECT_EQ(0, remove_dir(dir));
}

#ifndef LMP
#define LMP "/usr/bin/lmp"
#endif

/* LAMMPS's melt example made small: 500 atoms, 100 steps, thermo every 20. */
static const char in_melt[] =
	"units lj\n"
	"atom_style atomic\n"
	"lattice fcc 0.8442\n"
	"region box block 0 5 0 5 0 5\n"
	"create_box 1 box\n"
	"create_atoms 1 box\n"
	"mass 1 1.0\n"
	"velocity all create 3.0 87287 loop geom\n"
	"pair_style lj/cut 2.5\n"
	"pair_coeff 1 1 1.0 1.0 2.5\n"
	"neighbor 0.3 bin\n"
	"neigh_modify every 20 delay 0 check no\n"
	"fix 1 all nve\n"
	"thermo 20\n"
	"run 100\n";

/*
 * Debian's LAMMPS: lmp is stripped (no main for gdb), its code in
 * liblammps. The start stops at the first instruction, before any
 * library is loaded; breakpoints on LAMMPS's functions are pending and
 * resolve when liblammps loads. Neighbor::decide() stops once per call,
 * in the function, never first at liblammps's own @plt stub for it.
 */
TEST_F_TIMEOUT(late, lammps_breakpoints_before_its_library_loads, 600)
{
	char dir[] = "/tmp/crdbg-lmp-XXXXXX", in[64], path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"break LAMMPS_NS::Verlet::run\n"
		"break LAMMPS_NS::Neighbor::decide\n"
		"timeout 0\n"
		"continue\n"
		"continue\n"
		"bt 2\n"
		"continue\n"
		"info breakpoints\n"
		"delete\n"
		"continue\n";
	const char *a[] = { "-n", "1", "--batch", path, LMP, "-log", "none", "-in", in, NULL };
	const char *out;
	double secs;

	if (access(LMP, X_OK))
		SKIP(return, "no %s (Debian's lammps)", LMP);
	mpi_env();
	ASSERT_EQ(0, input_dir(dir, "in.melt", in_melt, in, sizeof(in)));
	ASSERT_EQ(0, write_script(path, script));
	EXPECT_EQ(0, timed_debug(&self->r, a, &secs)) TH_LOG("%s", self->r.buf);
	unlink(path);
	EXPECT_EQ(0, remove_dir(dir));
	TH_LOG("session: %.1f s", secs);
	out = self->r.buf;
	EXPECT_TRUE(has_line(out, "^\\[0\\]: stopped: .*_start")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0]: breakpoint 2 (LAMMPS_NS::Verlet::run) pending\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0]: stopped: breakpoint 2, LAMMPS_NS::Verlet::run(int)\n"))
		TH_LOG("%s", out);
	EXPECT_EQ(2, count(out, "\n[0]: stopped: breakpoint 3, LAMMPS_NS::Neighbor::decide()\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0]: #1  LAMMPS_NS::Verlet::run(int)\n")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "@plt")) TH_LOG("%s", out);
	/* resolved everywhere now: no pending line but the start's main */
	EXPECT_EQ(1, count(out, "\tpending on")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0\\] +100 +")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0]: exited: code 0\n")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
