// SPDX-License-Identifier: GPL-2.0
/*
 * The program of the incremental checkpoint tests and benchmark: it fills
 * MB MiB with a pattern, then for each phase 1..PHASES waits until the
 * file "$INCR_GO.<phase>" exists, writes PERMILLE per mille of its pages
 * (a different slice each phase, a value that depends on the phase) and
 * prints a checksum of the whole buffer:
 *
 *   prog_incr MB PHASES PERMILLE
 *   "ready" once filled, "wait <phase>" before each wait,
 *   "phase <p> dirtied <pages> sum <hex>" after each, "done sum <hex>".
 *
 * A restart from a checkpoint taken during a wait prints the same lines
 * as an uninterrupted run only if every page, from every checkpoint of
 * the chain, came back.
 *
 * With $INCR_GAP set, a thread wakes every millisecond and each phase
 * also prints, on stderr, "gap <phase> <ms> <total ms>": the longest time
 * that thread did not run since the previous phase (the benchmark's
 * measure of how long a checkpoint stopped the program) and the sum of
 * every such time over 10 ms: how long it was stopped in all, by a
 * checkpoint that stops it more than once. The thread runs SCHED_FIFO
 * where it may, so that waiting for a CPU is not counted.
 *
 * With $INCR_GROW set, a thread maps a page of its own every 2 ms from
 * the first wait on (2000 at most), each holding its number, and the end
 * prints "grown ok" once every page it mapped still does ("grown bad" if
 * not): a checkpoint taken while it grows has pages its pre-dump did not.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static _Atomic uint64_t max_gap_ns, stopped_ns;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *gap_thread(void *arg)
{
	struct timespec ms = { .tv_nsec = 1000 * 1000 };
	struct sched_param sp = { .sched_priority = 1 };
	uint64_t last, t;

	(void)arg;
	/*
	 * Real-time (where allowed: root), so that a pause is the thread
	 * being stopped, not waiting for a CPU the checkpoint's own work
	 * (writing pages, digests) took from it.
	 */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	last = now_ns();
	for (;;) {
		nanosleep(&ms, NULL);
		t = now_ns();
		if (t - last > atomic_load(&max_gap_ns))
			atomic_store(&max_gap_ns, t - last);
		if (t - last > 10 * 1000 * 1000)
			atomic_fetch_add(&stopped_ns, t - last - ms.tv_nsec);
		last = t;
	}
	return NULL;
}

static uint64_t sum(const uint64_t *w, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 1099511628211ull;
	return h;
}

#define GROW_MAX 2000

static uint64_t *grown[GROW_MAX];
static _Atomic int nr_grown, grow_on;

static void *grow_thread(void *arg)
{
	struct timespec ms2 = { .tv_nsec = 2 * 1000 * 1000 };
	uint64_t *pg;

	(void)arg;
	while (!atomic_load(&grow_on))
		nanosleep(&ms2, NULL);
	while (atomic_load(&nr_grown) < GROW_MAX) {
		pg = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pg == MAP_FAILED)
			break;
		for (size_t i = 0; i < PAGE / 8; i++)
			pg[i] = (uint64_t)atomic_load(&nr_grown) * 0x100000001ull + i;
		grown[atomic_load(&nr_grown)] = pg;
		atomic_fetch_add(&nr_grown, 1);
		nanosleep(&ms2, NULL);
	}
	return NULL;
}

static bool grown_intact(void)
{
	for (int k = 0; k < atomic_load(&nr_grown); k++)
		for (size_t i = 0; i < PAGE / 8; i++)
			if (grown[k][i] != (uint64_t)k * 0x100000001ull + i)
				return false;
	return true;
}

static void wait_go(const char *go, int phase)
{
	struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };
	char path[4096];

	snprintf(path, sizeof(path), "%s.%d", go, phase);
	printf("wait %d\n", phase);
	atomic_store(&grow_on, 1);
	while (access(path, F_OK))
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *go = getenv("INCR_GO");
	size_t len, pages, per, p, i;
	int phases, permille, ph;
	uint64_t *w;

	if (argc < 4 || !go)
		return 2;
	len = (size_t)atol(argv[1]) << 20;
	phases = atoi(argv[2]);
	permille = atoi(argv[3]);
	setvbuf(stdout, NULL, _IONBF, 0);
	w = aligned_alloc(PAGE, len);
	if (!w)
		return 3;
	pages = len / PAGE;
	for (i = 0; i < len / 8; i++)
		w[i] = i * 2654435761u;
	per = pages * (size_t)permille / 1000;
	if (!per)
		per = 1;
	if (getenv("INCR_GAP")) {
		pthread_t th;

		pthread_create(&th, NULL, gap_thread, NULL);
	}
	if (getenv("INCR_GROW")) {
		pthread_t th;

		pthread_create(&th, NULL, grow_thread, NULL);
	}
	printf("ready\n");
	for (ph = 1; ph <= phases; ph++) {
		wait_go(go, ph);
		/* pages ph*per .. (ph+1)*per-1, wrapping: a new slice each phase */
		for (i = 0; i < per; i++) {
			p = ((size_t)ph * per + i) % pages;
			w[p * (PAGE / 8) + (size_t)ph] += (uint64_t)ph * 0x9e3779b97f4a7c15ull;
		}
		printf("phase %d dirtied %zu sum %016llx\n", ph, per,
		       (unsigned long long)sum(w, len / 8));
		if (getenv("INCR_GAP"))
			fprintf(stderr, "gap %d %.1f %.1f\n", ph,
				(double)atomic_exchange(&max_gap_ns, 0) / 1e6,
				(double)atomic_exchange(&stopped_ns, 0) / 1e6);
	}
	if (getenv("INCR_GROW"))
		printf("grown %s\n", grown_intact() ? "ok" : "bad");
	printf("done sum %016llx\n", (unsigned long long)sum(w, len / 8));
	return 0;
}
