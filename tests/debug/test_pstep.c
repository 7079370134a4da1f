// SPDX-License-Identifier: GPL-2.0
/*
 * The parallel step end to end: `crdbg debug -- mpirun ...` on real Open
 * MPI jobs with libcrdbg-mpi preloaded into the ranks, driven with -ex,
 * the console's rows checked line by line. Seed 002's Table 1 on the
 * 16-line program (prog_pstep.c), and the cases of prog_pstep_cases.c.
 */
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "console_run.h"

#ifndef PSTEP_PROG
#define PSTEP_PROG "build/tests/debug/prog_pstep"
#endif
#ifndef PSTEP_CASES
#define PSTEP_CASES "build/tests/debug/prog_pstep_cases"
#endif
#ifndef PSTEP_LIB
#define PSTEP_LIB "build/usr/libcrdbg-mpi-ompi.so"
#endif
#ifndef PSTEP_PROG_MPICH
#define PSTEP_PROG_MPICH "build/tests/debug/prog_pstep_mpich"
#endif
#ifndef PSTEP_LIB_MPICH
#define PSTEP_LIB_MPICH "build/usr/libcrdbg-mpi-mpich.so"
#endif
#ifndef PSTEP_FORTRAN
#define PSTEP_FORTRAN "build/tests/debug/prog_pstep_f"
#endif
#ifndef PSTEP_FORTRAN_F08
#define PSTEP_FORTRAN_F08 "build/tests/debug/prog_pstep_f08"
#endif
#ifndef PSTEP_FORTRAN_MPICH
#define PSTEP_FORTRAN_MPICH "build/tests/debug/prog_pstep_f_mpich"
#endif

static bool have_ompi(void)
{
	return !access(PSTEP_PROG, X_OK) && !access(PSTEP_CASES, X_OK) &&
	       !access(PSTEP_LIB, R_OK) &&
	       system("mpirun --version >/dev/null 2>&1") == 0;
}

/* "LD_PRELOAD=<absolute path of the library>" for mpirun -x. */
static const char *preload_arg(void)
{
	static char buf[4200];
	char *abs = realpath(PSTEP_LIB, NULL);

	snprintf(buf, sizeof(buf), "LD_PRELOAD=%s", abs ? abs : PSTEP_LIB);
	free(abs);
	return buf;
}

/* crdbg debug ARGS: its exit status, its output in *out. */
static int crdbg(struct run *r, char **out, const char *const *args)
{
	int rc = debug(r, args);

	*out = r->buf;
	return rc;
}

FIXTURE(pstep) {
	struct run r;
	char *out;
};

FIXTURE_SETUP(pstep)
{
	self->out = NULL;
	self->r.buf = NULL;
	if (!have_ompi())
		SKIP(return, "no mpirun, or %s / %s / %s not built (mpicc)",
		     PSTEP_PROG, PSTEP_CASES, PSTEP_LIB);
	mpi_env();
}

FIXTURE_TEARDOWN(pstep)
{
	run_free(&self->r);
}

/* Rows 2-8 of seed 002's Table 1 after nexts 1-7, and the eighth next. */
static const char table1_rows[] =
	"(crdbg) next\n"
	"[0-3] prog_pstep.c:4 green\n"
	"(crdbg) next\n"
	"[0-3] prog_pstep.c:5 green\n"
	"(crdbg) next\n"
	"[0,2-3] prog_pstep.c:9 green\n"
	"[1] prog_pstep.c:7 green\n"
	"(crdbg) next\n"
	"[0] prog_pstep.c:10 green\n"
	"[1] prog_pstep.c:7 red (MPI_Recv from 0)\n"
	"[2-3] prog_pstep.c:13 green\n"
	"(crdbg) next\n"
	"[0] prog_pstep.c:11 green\n"
	"[1] prog_pstep.c:7 red (MPI_Recv from 0)\n"
	"[2-3] prog_pstep.c:13 red (MPI_Finalize)\n"
	"(crdbg) next\n"
	"[0] prog_pstep.c:13 green\n"
	"[1] prog_pstep.c:9 green\n"
	"[2-3] prog_pstep.c:13 red (MPI_Finalize)\n"
	"(crdbg) next\n"
	"[0,2-3] prog_pstep.c:13 red (MPI_Finalize)\n"
	"[1] prog_pstep.c:13 green\n"
	"(crdbg) next\n"
	"[0-3] prog_pstep.c:14 green\n";

/* Table 1's program in one language: its file, its first and last lines, its rows. */
struct table1 {
	const char *file;	/* as the mpi table shows it */
	int init_line, end_line;
	const char *rows;
};

static const struct table1 table1_c = { "tests/debug/prog_pstep.c", 3, 14, table1_rows };

/*
 * The console's output of -ex mpi, 8 x next, mpi, continue on Table 1's
 * program: row 1 (every rank at MPI_Init's line, in or before MPI_Init),
 * rows 2-8, MPI_Finalize done by the eighth next, the sequential step
 * counts (rank 0: 7, rank 1: 6, the others 5), the exit.
 */
static void check_table1(struct __test_metadata *_metadata, const char *o,
			 const struct table1 *t)
{
	static const int steps[4] = { 7, 6, 5, 5 };
	char want[160], at[64];

	EXPECT_NE(NULL, strstr(o, "[0-3]: libcrdbg-mpi: step and next are parallel steps; "
			       "MPI_Send is synchronous (MPI_Ssend) while debugging\n"))
		TH_LOG("%s", o);
	for (int r = 0; r < 4; r++) {
		snprintf(at, sizeof(at), "%s:%d", t->file, t->init_line);
		snprintf(want, sizeof(want), "\n%-5d %-7s %-32s %-6d MPI_Init\n", r, "green", at, 0);
		EXPECT_NE(NULL, strstr(o, want)) TH_LOG("no '%s' in %s", want, o);
		snprintf(at, sizeof(at), "%s:%d", t->file, t->end_line);
		snprintf(want, sizeof(want), "\n%-5d %-7s %-32s %-6d -\n", r, "green", at, steps[r]);
		EXPECT_NE(NULL, strstr(o, want)) TH_LOG("no '%s' in %s", want, o);
	}
	EXPECT_NE(NULL, strstr(o, t->rows)) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[0-3]: exited: code 0\n")) TH_LOG("%s", o);
	EXPECT_EQ(NULL, strstr(o, "breakpoint 2")) TH_LOG("the call-site breakpoints showed: %s", o);
	EXPECT_EQ(NULL, strstr(o, "\033[")) TH_LOG("colours without a terminal: %s", o);
}

/*
 * -ex mpi, 8 x next, mpi, continue on Table 1's program prog, written as
 * t says: under mpirun (4 ranks held in MPI_Init by MPIR), or under
 * MPICH's mpiexec.hydra, which has no MPIR symbols here, so that the
 * ranks are acquired through libcrdbg-mpi's hold in MPI_Init
 * (--mpi-hold). Checked by check_table1().
 */
static void run_table1(struct __test_metadata *_metadata, FIXTURE_DATA(pstep) *self,
		       bool hydra, const char *prog, const struct table1 *t)
{
	/* the state's call read in gdb, in C (ex[1]: left out for Fortran) */
	static const char *const ex[] = { "mpi", "gdb print crdbg_mpi_state.call",
					  "next", "next", "next", "next",
					  "next", "next", "next", "next", "mpi", "continue" };
	bool in_c = t == &table1_c;
	char lib[4200], *abs = realpath(PSTEP_LIB_MPICH, NULL);
	const char *mpirun[] = { "mpirun", "--oversubscribe", "-n", "4", "-x", preload_arg() };
	const char *mpiexec[] = { "mpiexec.hydra", "-n", "4", "-genv", "LD_PRELOAD", lib };
	const char *a[48];
	size_t n = 0;

	snprintf(lib, sizeof(lib), "%s", abs ? abs : PSTEP_LIB_MPICH);
	free(abs);
	if (access(prog, X_OK) || (hydra && (access(PSTEP_LIB_MPICH, R_OK) ||
					     system("mpiexec.hydra --version >/dev/null 2>&1"))))
		SKIP(return, "%s not built, or no mpiexec.hydra or %s (no mpicc.mpich)",
		     prog, PSTEP_LIB_MPICH);
	if (hydra)
		a[n++] = "--mpi-hold";
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		if (i == 1 && !in_c)
			continue;
		a[n++] = "-ex";
		a[n++] = ex[i];
	}
	a[n++] = "--";
	for (size_t i = 0; i < 6; i++)
		a[n++] = hydra ? mpiexec[i] : mpirun[i];
	a[n++] = prog;
	a[n] = NULL;
	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	check_table1(_metadata, self->out, t);
	if (in_c)
		EXPECT_NE(NULL, strstr(self->out, "[0-3]: $1 = \"MPI_Init\"")) TH_LOG("%s", self->out);
	if (hydra)
		EXPECT_NE(NULL, strstr(self->out, "crdbg-mpi: hold rank 3 of 4 pid "))
			TH_LOG("%s", self->out);
}

/* Table 1 of seed 002 under Open MPI. */
TEST_F_TIMEOUT(pstep, table1, 240)
{
	run_table1(_metadata, self, false, PSTEP_PROG, &table1_c);
}

/* The same under MPICH. */
TEST_F_TIMEOUT(pstep, table1_mpich, 240)
{
	run_table1(_metadata, self, true, PSTEP_PROG_MPICH, &table1_c);
}

/* Table 1's rows again, in prog_pstep_f.f90's lines (Fortran, mpif.h). */
static const char table1_fortran_rows[] =
	"(crdbg) next\n"
	"[0-3] prog_pstep_f.f90:9 green\n"
	"(crdbg) next\n"
	"[0-3] prog_pstep_f.f90:10 green\n"
	"(crdbg) next\n"
	"[0,2-3] prog_pstep_f.f90:13 green\n"
	"[1] prog_pstep_f.f90:11 green\n"
	"(crdbg) next\n"
	"[0] prog_pstep_f.f90:14 green\n"
	"[1] prog_pstep_f.f90:11 red (MPI_Recv from 0)\n"
	"[2-3] prog_pstep_f.f90:17 green\n"
	"(crdbg) next\n"
	"[0] prog_pstep_f.f90:15 green\n"
	"[1] prog_pstep_f.f90:11 red (MPI_Recv from 0)\n"
	"[2-3] prog_pstep_f.f90:17 red (MPI_Finalize)\n"
	"(crdbg) next\n"
	"[0] prog_pstep_f.f90:17 green\n"
	"[1] prog_pstep_f.f90:13 green\n"
	"[2-3] prog_pstep_f.f90:17 red (MPI_Finalize)\n"
	"(crdbg) next\n"
	"[0,2-3] prog_pstep_f.f90:17 red (MPI_Finalize)\n"
	"[1] prog_pstep_f.f90:17 green\n"
	"(crdbg) next\n"
	"[0-3] prog_pstep_f.f90:18 green\n";

static const struct table1 table1_fortran = {
	"tests/debug/prog_pstep_f.f90", 8, 18, table1_fortran_rows
};

/*
 * Table 1 in Fortran under Open MPI, whose Fortran routines call PMPI_
 * directly: the steps see the program's calls through libcrdbg-mpi's
 * Fortran wrappers, the same rows as in C.
 */
TEST_F_TIMEOUT(pstep, table1_fortran, 240)
{
	run_table1(_metadata, self, false, PSTEP_FORTRAN, &table1_fortran);
}

/*
 * The same under MPICH, whose Fortran routines call MPI_ from inside its
 * Fortran library: the hold in MPI_Init, the rows at the user's lines.
 */
TEST_F_TIMEOUT(pstep, table1_fortran_mpich, 240)
{
	run_table1(_metadata, self, true, PSTEP_FORTRAN_MPICH, &table1_fortran);
}

/*
 * mpi_f08 under Open MPI (its routines call ompi_*_f): a ring of
 * non-blocking calls with rank 1 held. Its neighbours go red in
 * MPI_Waitall, shown at their call's line, their own frame on top of bt;
 * once it is released the waits finish, the in-place sum is right and the
 * job ends.
 */
TEST_F_TIMEOUT(pstep, fortran_f08_ring, 240)
{
	const char *a[] = { "-ex", "next", "-ex", "next", "-ex", "next", "-ex", "next",
			    "-ex", "next", "-ex", "next", "-ex", "hold 1",
			    "-ex", "next", "-ex", "next", "-ex", "[0] bt", "-ex", "release 1",
			    "-ex", "next", "-ex", "next", "-ex", "next", "-ex", "next",
			    "-ex", "continue",
			    "--", "mpirun", "--oversubscribe", "-n", "3", "-x",
			    preload_arg(), PSTEP_FORTRAN_F08, NULL };
	const char *o;

	if (access(PSTEP_FORTRAN_F08, X_OK))
		SKIP(return, "%s not built (no mpif90.openmpi)", PSTEP_FORTRAN_F08);
	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	o = self->out;
	EXPECT_NE(NULL, strstr(o, "[0] prog_pstep_f08.f90:18 red (MPI_Waitall from 2, to 1)\n"
			       "[1] prog_pstep_f08.f90:17 yellow\n"
			       "[2] prog_pstep_f08.f90:18 red (MPI_Waitall from 1, to 0)\n"))
		TH_LOG("%s", o);
	EXPECT_TRUE(has_line(o, "^\\[0\\]: #[0-9]+ +pstep_f08 at "
			     "tests/debug/prog_pstep_f08.f90:18$")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[2] prog_pstep_f08.f90:20 red (MPI_Allreduce)\n")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "(crdbg) next\n[0-2] prog_pstep_f08.f90:21 green\n"))
		TH_LOG("%s", o);
	for (int r = 0; r < 3; r++) {
		char want[64];

		snprintf(want, sizeof(want), "[%d] rank %d total 3\n", r, r);
		EXPECT_NE(NULL, strstr(o, want)) TH_LOG("no '%s' in %s", want, o);
	}
	EXPECT_NE(NULL, strstr(o, "[0-2]: exited: code 0\n")) TH_LOG("%s", o);
}

/*
 * continue after a parallel step that left ranks red: the program runs to
 * its end, nothing of the console's stops a rank at its call site.
 */
TEST_F_TIMEOUT(pstep, continue_from_red, 240)
{
	const char *a[] = { "-ex", "next", "-ex", "next", "-ex", "next", "-ex", "next",
			    "-ex", "next", "-ex", "continue",
			    "--", "mpirun", "--oversubscribe", "-n", "4", "-x",
			    preload_arg(), PSTEP_PROG, NULL };

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "[1] prog_pstep.c:7 red (MPI_Recv from 0)\n"
			       "[2-3] prog_pstep.c:13 red (MPI_Finalize)\n"
			       "(crdbg) continue\n")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "(crdbg) continue\n[0-3]: exited: code 0\n"))
		TH_LOG("%s", self->out);
}

/* A red rank's state read through gdb: the call, its peer, synchronous sends. */
TEST_F_TIMEOUT(pstep, state_through_gdb, 240)
{
	const char *a[] = { "-ex", "next", "-ex", "next", "-ex", "next", "-ex", "next",
			    "-ex", "[1] gdb print crdbg_mpi_state.call",
			    "-ex", "[1] gdb print crdbg_mpi_state.needs[0]",
			    "-ex", "[1] gdb print crdbg_mpi_state.sync_sends",
			    "-ex", "[1] gdb print crdbg_mpi_state.world_rank",
			    "--", "mpirun", "--oversubscribe", "-n", "4", "-x",
			    preload_arg(), PSTEP_PROG, NULL };
	const char *o;

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	o = self->out;
	EXPECT_NE(NULL, strstr(o, "[1] prog_pstep.c:7 red (MPI_Recv from 0)\n")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[1]: $1 = \"MPI_Recv\"")) TH_LOG("%s", o);
	/* kind 2: a receive, from rank 0, tag 0. */
	EXPECT_NE(NULL, strstr(o, "[1]: $2 = {kind = 2, peer = 0, tag = 0, pad = 0}"))
		TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[1]: $3 = 1\n")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[1]: $4 = 1\n")) TH_LOG("%s", o);
}

/*
 * MPI calls are atomic for the user: rank 1, red in MPI_Recv, is shown at
 * the call's line in stop lines, status, bt and stacks, its own frame
 * selected; "mpi frames on" shows MPI's frames again.
 */
TEST_F_TIMEOUT(pstep, mpi_call_atomic, 240)
{
	const char *a[] = { "-ex", "next", "-ex", "next", "-ex", "next", "-ex", "next",
			    "-ex", "interrupt", "-ex", "[1] status -p", "-ex", "[1] bt",
			    "-ex", "stacks", "-ex", "[1] print rank",
			    "-ex", "mpi frames on", "-ex", "[1] bt", "-ex", "stacks",
			    "-ex", "mpi frames off", "-ex", "echo @@OFF", "-ex", "[1] bt",
			    "--", "mpirun", "--oversubscribe", "-n", "4", "-x",
			    preload_arg(), PSTEP_PROG, NULL };
	const char *o, *on, *off;

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	o = self->out;
	EXPECT_NE(NULL, strstr(o, "\n[1]: stopped: signal SIGINT, main at "
			       "tests/debug/prog_pstep.c:7 (in MPI_Recv)\n")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "stopped: signal SIGINT, main at tests/debug/prog_pstep.c:7 "
			       "(in MPI_Recv), pc 0x")) TH_LOG("%s", o);
	EXPECT_TRUE(has_line(o, "^\\[1\\]: #[0-9]+ +main at tests/debug/prog_pstep.c:7$"))
		TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "(crdbg) stacks\n[0-3] main\n(crdbg)")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[1]: rank = 1\n")) TH_LOG("%s", o);
	on = strstr(o, "mpi frames: shown");
	off = strstr(o, "@@OFF");
	ASSERT_NE(NULL, on) TH_LOG("%s", o);
	ASSERT_NE(NULL, off) TH_LOG("%s", o);
	/*
	 * Shown: MPI_Recv's frame (its number is where the interrupt found
	 * the rank inside MPI), and a branch below main in stacks.
	 */
	EXPECT_TRUE(has_line(on, "^\\[1\\]: #[0-9]+ +MPI_Recv$")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(on, "\n  [1] MPI_Recv\n")) TH_LOG("%s", o);
	/* Hidden again. */
	EXPECT_EQ(NULL, strstr(off, "MPI_Recv\n")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(off, "main at tests/debug/prog_pstep.c:7")) TH_LOG("%s", o);
}

/* Every rank in MPI_Sendrecv around a ring: one next completes them all. */
TEST_F_TIMEOUT(pstep, sendrecv_ring, 240)
{
	const char *a[] = { "-ex", "break ring", "-ex", "continue", "-ex", "next",
			    "-ex", "next", "-ex", "print got", "-ex", "continue",
			    "--", "mpirun", "--oversubscribe", "-n", "4", "-x",
			    preload_arg(), PSTEP_CASES, "ring", NULL };
	const char *o;

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	o = self->out;
	EXPECT_NE(NULL, strstr(o, "(crdbg) next\n[0-3] prog_pstep_cases.c:104 green\n"
			       "(crdbg) next\n[0-3] prog_pstep_cases.c:106 green\n"))
		TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[0]: got = 3\n[1]: got = 0\n[2]: got = 1\n[3]: got = 2\n"))
		TH_LOG("%s", o);
	EXPECT_EQ(NULL, strstr(o, " red")) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[0-3]: exited: code 0\n")) TH_LOG("%s", o);
}

/*
 * A barrier that a held (yellow) rank has not reached: the others are red
 * in it, shown at its line, until the rank is released and enters it.
 */
TEST_F_TIMEOUT(pstep, barrier_held_rank, 240)
{
	static const char rows[] =
		"(crdbg) hold [3]\n"
		"[0-2] prog_pstep_cases.c:202 green\n"
		"[3] prog_pstep_cases.c:202 yellow\n"
		"(crdbg) next\n"
		"[0-2] prog_pstep_cases.c:203 green\n"
		"[3] prog_pstep_cases.c:202 yellow\n"
		"(crdbg) next\n"
		"[0-2] prog_pstep_cases.c:203 red (MPI_Barrier)\n"
		"[3] prog_pstep_cases.c:202 yellow\n"
		"(crdbg) release 3\n"
		"[0-2] prog_pstep_cases.c:203 red (MPI_Barrier)\n"
		"[3] prog_pstep_cases.c:202 green\n"
		"(crdbg) next\n"
		"[0-2] prog_pstep_cases.c:203 red (MPI_Barrier)\n"
		"[3] prog_pstep_cases.c:203 green\n"
		"(crdbg) next\n"
		"[0-3] prog_pstep_cases.c:204 green\n";
	const char *a[] = { "-ex", "break barrier", "-ex", "continue", "-ex", "hold [3]",
			    "-ex", "next", "-ex", "next", "-ex", "release 3",
			    "-ex", "next", "-ex", "next", "-ex", "continue",
			    "--", "mpirun", "--oversubscribe", "-n", "4", "-x",
			    preload_arg(), PSTEP_CASES, "barrier", NULL };

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, rows)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "[0-3]: exited: code 0\n")) TH_LOG("%s", self->out);
}

/*
 * MPI_Isend then MPI_Wait on rank 0 while rank 1 has not posted its
 * MPI_Irecv: rank 0 is red in the wait (JSON: the call, peer and tag)
 * until rank 1 waits too.
 */
TEST_F_TIMEOUT(pstep, isend_irecv_wait, 240)
{
	const char *a[] = { "--json", "-ex", "break isend", "-ex", "continue",
			    "-ex", "next", "-ex", "next", "-ex", "next", "-ex", "next",
			    "-ex", "next", "-ex", "next", "-ex", "print got",
			    "--", "mpirun", "--oversubscribe", "-n", "2", "-x",
			    preload_arg(), PSTEP_CASES, "isend", NULL };
	static const char red[] =
		"{\"event\":\"pstep\",\"ranks\":["
		"{\"rank\":0,\"file\":\"tests/debug/prog_pstep_cases.c\",\"line\":307,"
		"\"state\":\"red\",\"mpi\":{\"call\":\"MPI_Wait\",\"peer\":1,\"tag\":7}},"
		"{\"rank\":1,\"file\":\"tests/debug/prog_pstep_cases.c\",\"line\":310,"
		"\"state\":\"green\",\"mpi\":null}]}\n";
	static const char done[] =
		"{\"event\":\"pstep\",\"ranks\":["
		"{\"rank\":0,\"file\":\"tests/debug/prog_pstep_cases.c\",\"line\":313,"
		"\"state\":\"green\",\"mpi\":null},"
		"{\"rank\":1,\"file\":\"tests/debug/prog_pstep_cases.c\",\"line\":313,"
		"\"state\":\"green\",\"mpi\":null}]}\n";

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, red)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, done)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "\"ranks\":\"0-1\",\"error\":false,\"text\":\"got = 0\""))
		TH_LOG("%s", self->out);
}

/* Two ranks each in MPI_Recv from the other: a deadlock, named, no hang. */
TEST_F_TIMEOUT(pstep, deadlock_reported, 240)
{
	const char *a[] = { "-ex", "break deadlock", "-ex", "continue", "-ex", "next",
			    "-ex", "next", "-ex", "next",
			    "--", "mpirun", "--oversubscribe", "-n", "2", "-x",
			    preload_arg(), PSTEP_CASES, "deadlock", NULL };
	static const char rows[] =
		"deadlock: no rank can move: [0] MPI_Recv from 1 -> [1] MPI_Recv from 0 -> [0]\n"
		"[0] prog_pstep_cases.c:404 red (MPI_Recv from 1)\n"
		"[1] prog_pstep_cases.c:404 red (MPI_Recv from 0)\n";
	const char *second;

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	second = strstr(self->out, rows);
	EXPECT_NE(NULL, second) TH_LOG("%s", self->out);
	/* The next next finds them where they were: still a deadlock. */
	EXPECT_NE(NULL, second ? strstr(second + 1, rows) : NULL) TH_LOG("%s", self->out);
}

/* Rank 1 exits; rank 0 goes on stepping, rank 1 shown exited. */
TEST_F_TIMEOUT(pstep, rank_exits, 240)
{
	const char *a[] = { "--json", "-ex", "break leave", "-ex", "continue",
			    "-ex", "next", "-ex", "next", "-ex", "next", "-ex", "next",
			    "--", "mpirun", "--oversubscribe", "-n", "2", "-x",
			    preload_arg(), PSTEP_CASES, "exit", NULL };
	static const char after[] =
		"{\"type\":\"exit\",\"ranks\":\"1\",\"reason\":\"exited-normally\",\"code\":0}\n"
		"{\"event\":\"pstep\",\"ranks\":["
		"{\"rank\":0,\"file\":\"tests/debug/prog_pstep_cases.c\",\"line\":506,"
		"\"state\":\"green\",\"mpi\":null},"
		"{\"rank\":1,\"file\":null,\"line\":null,\"state\":\"exited\",\"mpi\":null}]}\n";
	static const char later[] =
		"{\"event\":\"pstep\",\"ranks\":["
		"{\"rank\":0,\"file\":\"tests/debug/prog_pstep_cases.c\",\"line\":507,"
		"\"state\":\"green\",\"mpi\":null},"
		"{\"rank\":1,\"file\":null,\"line\":null,\"state\":\"exited\",\"mpi\":null}]}\n";

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, after)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, later)) TH_LOG("%s", self->out);
}

/*
 * Rank 1 receives in a loop while rank 0 works before each send: red in
 * MPI_Recv for two steps of each iteration, green again when the message
 * comes; no breakpoint of the console's is left behind at the call site.
 */
TEST_F_TIMEOUT(pstep, recv_in_a_loop, 240)
{
	const char *a[60] = { "-ex", "break loop", "-ex", "continue" };
	static const char iteration[] =
		"(crdbg) next\n[0-1] prog_pstep_cases.c:703 green\n"
		"(crdbg) next\n[0] prog_pstep_cases.c:704 green\n[1] prog_pstep_cases.c:708 green\n"
		"(crdbg) next\n[0] prog_pstep_cases.c:705 green\n[1] prog_pstep_cases.c:709 green\n"
		"(crdbg) next\n[0] prog_pstep_cases.c:706 green\n"
		"[1] prog_pstep_cases.c:709 red (MPI_Recv from 0)\n"
		"(crdbg) next\n[0] prog_pstep_cases.c:707 green\n"
		"[1] prog_pstep_cases.c:709 red (MPI_Recv from 0)\n"
		"(crdbg) next\n[0-1] prog_pstep_cases.c:702 green\n";
	const char *o;
	int n = 4;

	for (int i = 0; i < 19; i++) {
		a[n++] = "-ex";
		a[n++] = "next";
	}
	a[n++] = "-ex";
	a[n++] = "print got";
	a[n++] = "-ex";
	a[n++] = "gdb info breakpoints";
	a[n++] = "--";
	a[n++] = "mpirun";
	a[n++] = "--oversubscribe";
	a[n++] = "-n";
	a[n++] = "2";
	a[n++] = "-x";
	a[n++] = preload_arg();
	a[n++] = PSTEP_CASES;
	a[n++] = "loop";
	a[n] = NULL;
	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	o = self->out;
	EXPECT_EQ(3, count(o, iteration)) TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "(crdbg) next\n[0-1] prog_pstep_cases.c:712 green\n"))
		TH_LOG("%s", o);
	EXPECT_NE(NULL, strstr(o, "[1]: got = 2\n")) TH_LOG("%s", o);
	EXPECT_EQ(NULL, strstr(o, " del ")) TH_LOG("a temporary breakpoint left: %s", o);
	/* Only the stop at loop's breakpoint. */
	EXPECT_EQ(1, count(o, "stopped: breakpoint")) TH_LOG("%s", o);
}

/* step goes into the user's functions and over MPI calls, as next does. */
TEST_F_TIMEOUT(pstep, step_into_user_code, 240)
{
	const char *a[] = { "-ex", "break prog_pstep_cases.c:608", "-ex", "continue",
			    "-ex", "step", "-ex", "step", "-ex", "step", "-ex", "continue",
			    "--", "mpirun", "--oversubscribe", "-n", "4", "-x",
			    preload_arg(), PSTEP_CASES, "ring", NULL };
	static const char rows[] =
		"(crdbg) step\n[0-3] prog_pstep_cases.c:102 green\n"
		"(crdbg) step\n[0-3] prog_pstep_cases.c:104 green\n"
		"(crdbg) step\n[0-3] prog_pstep_cases.c:106 green\n";

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, rows)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "[0-3]: exited: code 0\n")) TH_LOG("%s", self->out);
}

/*
 * A breakpoint reached inside a parallel next is shown with the console's
 * number (gdb's differs: the launcher's hold took one there).
 */
TEST_F_TIMEOUT(pstep, breakpoint_in_a_step, 240)
{
	const char *a[] = { "-ex", "break prog_pstep_cases.c:608", "-ex", "continue",
			    "-ex", "break ring", "-ex", "next",
			    "--", "mpirun", "--oversubscribe", "-n", "4", "-x",
			    preload_arg(), PSTEP_CASES, "ring", NULL };

	ASSERT_EQ(0, crdbg(&self->r, &self->out, a)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "(crdbg) next\n[0-3]: stopped: breakpoint 2, ring at "
			       "tests/debug/prog_pstep_cases.c:102\n"
			       "[0-3] prog_pstep_cases.c:102 green\n")) TH_LOG("%s", self->out);
}

/* On a terminal the colour words are in ANSI colour. */
TEST_F_TIMEOUT(pstep, colours_on_a_terminal, 240)
{
	const char *argv[] = { CRDBG, "debug", "-ex", "next", "-ex", "next", "-ex", "next",
			       "-ex", "next", "-ex", "quit", "--", "mpirun",
			       "--oversubscribe", "-n", "4", "-x", preload_arg(),
			       PSTEP_PROG, NULL };
	char *buf = calloc(1, OUT_MAX + 1);
	time_t t0 = time(NULL);
	size_t len = 0;
	int fd, ws = 0;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	pid = forkpty(&fd, NULL, NULL, NULL);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (time(NULL) - t0 < 200 && len < OUT_MAX) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(fd, buf + len, OUT_MAX - len);
		if (n <= 0)
			break;	/* EIO: the terminal's other end closed */
		len += n;
	}
	if (waitpid(pid, &ws, WNOHANG) == 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &ws, 0);
	}
	close(fd);
	EXPECT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "[0] prog_pstep.c:10 \033[32mgreen\033[0m\r\n"
			       "[1] prog_pstep.c:7 \033[31mred\033[0m (MPI_Recv from 0)\r\n"))
		TH_LOG("%s", buf);
	free(buf);
}

/* --mpi-hold on a command whose "ranks" never say they are held. */
TEST(mpi_hold_without_library)
{
	const char *a[] = { "--mpi-hold", "-ex", "status", "--", "/bin/true", NULL };
	struct run r;

	EXPECT_EQ(1, debug(&r, a)) TH_LOG("%s", r.buf);
	EXPECT_NE(NULL, strstr(r.buf, "crdbg: acquisition through libcrdbg-mpi's hold failed: "
			       "/bin/true: the launcher exited before every rank was held "
			       "(no libcrdbg-mpi preloaded in the ranks?)\n")) TH_LOG("%s", r.buf);
	run_free(&r);
}

TEST_HARNESS_MAIN
