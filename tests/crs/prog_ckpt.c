// SPDX-License-Identifier: GPL-2.0
/*
 * The program the checkpoint group checkpoints: N worker threads and a
 * main thread that writes "step I" lines to stdout, STEPS of them, one
 * every NAP ms, then "done" and the MPIR variables it sees (through
 * dlsym, so it works with and without libcrdbg preloaded).
 *
 *   prog_ckpt THREADS STEPS NAP_MS [tree]
 *
 * With $CKPT_GO set, the main thread waits after "step 5" until that file
 * exists (the workers keep running): the tests checkpoint it there. With
 * $CKPT_RSS_MB it first fills that many MiB of memory (benchmark). With
 * $CKPT_DEBUG_WITH_CHECKPOINT it sets MPIR_debug_with_checkpoint = 1 as an
 * attached debugger would (Table 5.2 scenarios 3 and 4).
 *
 * With "tree" it first becomes a session leader and forks a child that
 * starts a new process group, both idle until killed: the process tree
 * test checks their pid/ppid/pgid/sid after a restart.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long work[64];
static int nap_ms;

static void nap(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void *worker(void *arg)
{
	long i = (long)arg;

	for (;;) {
		work[i]++;
		nap(nap_ms);
	}
	return NULL;
}

static int mpir_int(const char *name)
{
	volatile int *p = dlsym(RTLD_DEFAULT, name);

	return p ? *p : -1;
}

int main(int argc, char **argv)
{
	int threads, steps, i;
	pthread_t th;

	if (argc < 4)
		return 2;
	threads = atoi(argv[1]);
	steps = atoi(argv[2]);
	nap_ms = atoi(argv[3]);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 4 && !strcmp(argv[4], "tree")) {
		pid_t c;

		setsid();
		c = fork();
		if (c == 0) {
			setpgid(0, 0);
			for (;;)
				nap(1000);
		}
		printf("child %d\n", (int)c);
	}
	for (i = 0; i < threads; i++)
		pthread_create(&th, NULL, worker, (void *)(long)i);
	if (getenv("CKPT_DEBUG_WITH_CHECKPOINT")) {
		volatile int *dwc = dlsym(RTLD_DEFAULT, "MPIR_debug_with_checkpoint");

		if (dwc)
			*dwc = 1;
	}
	if (getenv("CKPT_RSS_MB")) {
		size_t len = (size_t)atol(getenv("CKPT_RSS_MB")) << 20;
		char *mem = malloc(len);

		for (size_t off = 0; mem && off < len; off += 4096)
			mem[off] = (char)(off >> 12);
	}
	for (i = 0; i < steps; i++) {
		printf("step %d\n", i);
		if (i == 5 && getenv("CKPT_GO"))
			while (access(getenv("CKPT_GO"), F_OK))
				nap(nap_ms);
		nap(nap_ms);
	}
	printf("done checkpointable=%d debug_with_checkpoint=%d gate=%d\n",
	       mpir_int("MPIR_checkpointable"), mpir_int("MPIR_debug_with_checkpoint"),
	       mpir_int("MPIR_checkpoint_debug_gate"));
	return 0;
}
