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
 * also prints, on stderr, "gap <phase> <ms>": the longest time that
 * thread did not run since the previous phase (the benchmark's measure of
 * how long a checkpoint stopped the program).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static _Atomic uint64_t max_gap_ns;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *gap_thread(void *arg)
{
	struct timespec ms = { .tv_nsec = 1000 * 1000 };
	uint64_t last = now_ns(), t;

	(void)arg;
	for (;;) {
		nanosleep(&ms, NULL);
		t = now_ns();
		if (t - last > atomic_load(&max_gap_ns))
			atomic_store(&max_gap_ns, t - last);
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

static void wait_go(const char *go, int phase)
{
	struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };
	char path[4096];

	snprintf(path, sizeof(path), "%s.%d", go, phase);
	printf("wait %d\n", phase);
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
			fprintf(stderr, "gap %d %.1f\n", ph,
				(double)atomic_exchange(&max_gap_ns, 0) / 1e6);
	}
	printf("done sum %016llx\n", (unsigned long long)sum(w, len / 8));
	return 0;
}
