// SPDX-License-Identifier: GPL-2.0
/*
 * Freeze and thaw latency of the kmod and ptrace backends against plain
 * SIGSTOP/SIGCONT, for targets of 1, 8 and 64 spinning threads. Prints a
 * Markdown section. The three methods are interleaved round by round, so
 * the ratios compare runs made side by side under the same load.
 *
 * SIGSTOP "freeze" = kill(SIGSTOP) until every /proc/PID/task/N/stat says
 * 'T'; SIGCONT "thaw" = kill(SIGCONT) until none does.
 */
#include <stdbool.h>
#include <sys/utsname.h>

#include <crdbg/freeze.h>

#include "freeze-test.h"

#define METHODS 3
enum { M_KMOD, M_PTRACE, M_SIGSTOP };
static const char *const method_name[METHODS] = { "kmod", "ptrace", "SIGSTOP" };

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* true when every task of pid is (stopped ? 'T' : not 'T') */
static bool all_tasks(pid_t pid, bool stopped)
{
	char path[320], buf[512], *p;
	struct dirent *d;
	bool ok = true;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (ok && (d = readdir(dir))) {
		ssize_t len;
		int fd;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, d->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		p = strrchr(buf, ')');
		if (!p || p[1] != ' ')
			continue;
		ok = (p[2] == 'T') == stopped;
	}
	closedir(dir);
	return ok;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int one_round(int m, struct freeze_backend *b, pid_t pid, double *fz, double *th)
{
	char err[256];
	double t0, t1, t2;

	t0 = now_us();
	if (m == M_SIGSTOP) {
		kill(pid, SIGSTOP);
		while (!all_tasks(pid, true))
			;
		t1 = now_us();
		kill(pid, SIGCONT);
		while (!all_tasks(pid, false))
			;
		t2 = now_us();
	} else {
		if (freeze_process(b, pid, 0, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench: %s freeze: %s\n", method_name[m], err);
			return -1;
		}
		t1 = now_us();
		if (freeze_thaw(b, pid, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench: %s thaw: %s\n", method_name[m], err);
			return -1;
		}
		t2 = now_us();
	}
	*fz = t1 - t0;
	*th = t2 - t1;
	return 0;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1, 8, 64 };
	int rounds = argc > 1 ? atoi(argv[1]) : 15;
	struct freeze_backend *b[METHODS] = { NULL };
	double res[3][METHODS][2];
	char kmod_err[256], err[256];
	struct ft_shared *sh = ft_shared_new();
	struct utsname u;
	int si, m, r;

	if (!sh || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "usage: bench_freeze [ROUNDS 1..1000]\n");
		return 2;
	}
	if (freeze_backend_open(FREEZE_BACKEND_KMOD, &b[M_KMOD], kmod_err, sizeof(kmod_err)) < 0)
		b[M_KMOD] = NULL;
	if (freeze_backend_open(FREEZE_BACKEND_PTRACE, &b[M_PTRACE], err, sizeof(err)) < 0) {
		fprintf(stderr, "bench: ptrace backend: %s\n", err);
		return 1;
	}
	for (si = 0; si < 3; si++) {
		double v[METHODS][2][1000];
		pid_t pid = ft_spawn(sh, sizes[si] - 1, FT_MAIN_SPINS);

		if (pid < 0) {
			fprintf(stderr, "bench: cannot start a %d-thread target\n", sizes[si]);
			return 1;
		}
		for (r = 0; r < rounds; r++)
			for (m = 0; m < METHODS; m++) {
				if (m == M_KMOD && !b[M_KMOD])
					continue;
				if (one_round(m, b[m], pid, &v[m][0][r], &v[m][1][r]) < 0) {
					ft_kill(pid);
					return 1;
				}
			}
		for (m = 0; m < METHODS; m++) {
			res[si][m][0] = b[m] || m == M_SIGSTOP ? median(v[m][0], rounds) : 0;
			res[si][m][1] = b[m] || m == M_SIGSTOP ? median(v[m][1], rounds) : 0;
		}
		ft_kill(pid);
	}

	uname(&u);
	printf("## Freeze and thaw latency: kmod vs ptrace vs SIGSTOP\n\n");
	printf("Kernel %s, %ld CPUs; median of %d rounds per cell; the three methods\n"
	       "take turns on the same target within each round. Target: N threads\n"
	       "spinning on counters. Freeze ends when every thread is held (SIGSTOP:\n"
	       "when every /proc task says 'T'); thaw ends when the call returns\n"
	       "(SIGCONT: when no task says 'T'). Ratio = backend / SIGSTOP.\n\n",
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), rounds);
	if (!b[M_KMOD])
		printf("kmod: not measured (%s).\n\n", kmod_err);
	printf("| threads | op | kmod µs | ptrace µs | SIGSTOP µs | kmod / SIGSTOP | ptrace / SIGSTOP |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|\n");
	for (si = 0; si < 3; si++)
		for (int op = 0; op < 2; op++) {
			double s = res[si][M_SIGSTOP][op];

			printf("| %d | %s | ", sizes[si], op ? "thaw" : "freeze");
			if (b[M_KMOD])
				printf("%.0f | ", res[si][M_KMOD][op]);
			else
				printf("n/a | ");
			printf("%.0f | %.0f | ", res[si][M_PTRACE][op], s);
			if (b[M_KMOD])
				printf("%.2f | ", res[si][M_KMOD][op] / s);
			else
				printf("n/a | ");
			printf("%.2f |\n", res[si][M_PTRACE][op] / s);
		}
	freeze_backend_close(b[M_KMOD]);
	freeze_backend_close(b[M_PTRACE]);
	munmap(sh, sizeof(*sh));
	return 0;
}
