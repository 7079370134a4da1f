// SPDX-License-Identifier: GPL-2.0
/*
 * MPIR recognised by symbols (usr/console/mpir-probe.c): on this
 * platform's real launchers, on a starter of our own (also stripped, with
 * its symbols in a separate debug file found by build id), on programs
 * that implement no MPIR, on running processes, and on thousands of
 * mutated ELF images (built with ASan/UBSan: a read outside the image
 * fails the test).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "mpir-probe.h"

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(own_starter_is_mpir)
{
	struct mpir_probe p;

	ASSERT_EQ(0, mpir_probe_program(MPIR_LAUNCHER, &p));
	EXPECT_TRUE(p.found);
	EXPECT_TRUE(p.in_executable);
	EXPECT_EQ(MPIR_FAMILY_OTHER, p.family);
	EXPECT_STREQ(p.executable, p.object);
}

TEST(plain_programs_are_not)
{
	struct mpir_probe p;

	ASSERT_EQ(0, mpir_probe_program("true", &p));	/* through PATH */
	EXPECT_FALSE(p.found);
	ASSERT_EQ(0, mpir_probe_program("/bin/sh", &p));
	EXPECT_FALSE(p.found);
	EXPECT_EQ(-ENOENT, mpir_probe_program("no-such-program-crdbg", &p));
	EXPECT_EQ(-ENOENT, mpir_probe_program("/no/such/file", &p));
	/* A script is not an ELF executable. */
	EXPECT_EQ(-ENOEXEC, mpir_probe_program("/usr/bin/ldd", &p));
}

TEST(srun_by_its_symbols)
{
	struct mpir_probe p;

	if (access("/usr/bin/srun", X_OK))
		SKIP(return, "no srun (slurm-client is not installed)");
	ASSERT_EQ(0, mpir_probe_program("srun", &p));
	EXPECT_TRUE(p.found);
	EXPECT_TRUE(p.in_executable);
	EXPECT_EQ(MPIR_FAMILY_SLURM, p.family);
}

TEST(open_mpi_mpirun_through_libopen_rte)
{
	struct mpir_probe p;

	if (access("/usr/bin/orterun", X_OK))
		SKIP(return, "no Open MPI mpirun");
	/* Its name does not matter: orterun is mpirun's real file. */
	ASSERT_EQ(0, mpir_probe_program("/usr/bin/orterun", &p));
	EXPECT_TRUE(p.found);
	EXPECT_FALSE(p.in_executable);
	EXPECT_EQ(MPIR_FAMILY_ORTE, p.family);
	EXPECT_NE(NULL, strstr(p.object, "libopen-rte.so"));
}

/* MPICH's launcher by its real file, under any of its names. */
TEST(mpich_hydra_under_its_other_names)
{
	struct mpir_probe p;

	if (access("/usr/bin/mpiexec.hydra", X_OK) || access("/usr/bin/mpiexec.mpich", X_OK))
		SKIP(return, "no MPICH mpiexec.hydra and mpiexec.mpich (mpich is not installed)");
	ASSERT_EQ(0, mpir_probe_program("mpiexec.mpich", &p));
	EXPECT_EQ(MPIR_FAMILY_HYDRA, p.family);
	ASSERT_EQ(0, mpir_probe_program("/usr/bin/mpiexec.hydra", &p));
	EXPECT_EQ(MPIR_FAMILY_HYDRA, p.family);
}

/* Stripped, the starter's symbols are found again in its debug file. */
TEST(stripped_starter_with_a_debug_file)
{
	char dir[] = "/tmp/crdbg-probe-XXXXXX", cmd[1024], exe[300];
	struct mpir_probe p;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(exe, sizeof(exe), "%s/starter", dir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; cp %s starter; objcopy --only-keep-debug starter s.debug;"
		 " strip -s starter; id=$(readelf -n starter | sed -n 's/.*Build ID: //p');"
		 " mkdir -p dbg/.build-id/$(echo $id | cut -c1-2);"
		 " mv s.debug dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug",
		 dir, MPIR_LAUNCHER);
	ASSERT_EQ(0, sh(cmd));
	unsetenv("CRDBG_DEBUG_FILE_DIR");
	ASSERT_EQ(0, mpir_probe_program(exe, &p));
	EXPECT_FALSE(p.found);		/* stripped, no debug file known */
	snprintf(cmd, sizeof(cmd), "%s/dbg", dir);
	setenv("CRDBG_DEBUG_FILE_DIR", cmd, 1);
	ASSERT_EQ(0, mpir_probe_program(exe, &p));
	EXPECT_TRUE(p.found);
	unsetenv("CRDBG_DEBUG_FILE_DIR");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	sh(cmd);
}

TEST(running_processes)
{
	struct mpir_probe p;
	int fds[2];
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The starter runs "sleep" as its rank and waits for it. */
		setpgid(0, 0);	/* killed as a group, sleep included */
		close(fds[0]);
		dup2(fds[1], 1);
		execl(MPIR_LAUNCHER, MPIR_LAUNCHER, "sh", "-c", "echo up; exec sleep 30",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ASSERT_EQ(1, read(fds[0], &c, 1));
	ASSERT_EQ(0, mpir_probe_pid(pid, &p));
	EXPECT_TRUE(p.found);
	EXPECT_TRUE(p.in_executable);
	ASSERT_EQ(0, mpir_probe_pid(getpid(), &p));
	EXPECT_FALSE(p.found);
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	EXPECT_EQ(-ESRCH, mpir_probe_pid(pid, &p));
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* Mutations of a real image: the decoder must never read outside it. */
TEST(mutated_images)
{
	char id[64];
	struct stat st;
	uint8_t *orig, *buf;
	int fd = open(MPIR_LAUNCHER, O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstat(fd, &st));
	orig = malloc(st.st_size);
	ASSERT_NE(NULL, orig);
	ASSERT_EQ(st.st_size, read(fd, orig, st.st_size));
	close(fd);
	ASSERT_EQ(7, mpir_probe_elf(orig, st.st_size, id, sizeof(id)));
	EXPECT_NE(0, id[0]);
	/*
	 * The image (and so what the mutations hit) differs with the build
	 * path in its debug info: several seeds make the run less dependent
	 * on one layout.
	 */
	for (int iter = 0; iter < 80000; iter++) {
		size_t len;
		int flips;

		if (iter % 20000 == 0)
			rng = 0x2545f4914f6cdd1dull * (iter / 20000 + 1);
		len = iter % 7 ? st.st_size : rnd() % st.st_size;
		flips = 1 + rnd() % 16;

		buf = malloc(len ? len : 1);
		ASSERT_NE(NULL, buf);
		memcpy(buf, orig, len);
		for (int k = 0; k < flips && len; k++) {
			/* Mostly the headers, where offsets and sizes live. */
			size_t at = rnd() % 4 ? rnd() % (len < 64 ? len : 64) : rnd() % len;

			if (rnd() % 2)
				buf[at] = rnd();
			else
				buf[at] ^= 1 << (rnd() % 8);
		}
		/* Section headers: point their fields anywhere. */
		if (len > 64 && rnd() % 2) {
			uint64_t shoff;

			memcpy(&shoff, buf + 0x28, 8);
			if (shoff < len - 64) {
				size_t at = shoff + rnd() % 64 * 8 % (len - shoff - 8);
				uint64_t v = rnd() % 3 ? rnd() : UINT64_MAX - rnd();

				memcpy(buf + at, &v, 8);
			}
		}
		mpir_probe_elf(buf, len, id, sizeof(id));
		free(buf);
	}
	free(orig);
}

TEST_HARNESS_MAIN
