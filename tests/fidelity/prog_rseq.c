// SPDX-License-Identifier: GPL-2.0
/*
 * rseq: glibc registers each thread's struct rseq with the kernel. After
 * the word the kernel still has it registered, for the main thread and a
 * second one, at the same address with the same signature (registering
 * it again says EBUSY), and keeps cpu_id up to date, also after we move
 * to another CPU.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/rseq.h>
#include <sys/syscall.h>

#include "fidelity.h"

#ifndef RSEQ_SIG
#define RSEQ_SIG 0x53053053
#endif

static volatile int go;
static char thread_why[256];

static struct rseq *my_rseq(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* Empty if this thread's rseq is registered and tracks the CPU. */
static void check_rseq(char *why, size_t len, const char *who)
{
	struct rseq *rs = my_rseq();
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpu, i;
	cpu_set_t set;

	errno = 0;
	if (syscall(SYS_rseq, rs, sizeof(struct rseq), 0, RSEQ_SIG) == 0 || errno != EBUSY) {
		snprintf(why, len, "%s: rseq not registered as before (re-register: %s)", who,
			 errno ? strerror(errno) : "accepted");
		return;
	}
	for (i = 0; i < ncpu && i < 4; i++) {
		CPU_ZERO(&set);
		CPU_SET(i, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			continue;
		sched_yield();
		cpu = sched_getcpu();
		if ((int)rs->cpu_id != cpu || (int)rs->cpu_id_start != cpu) {
			snprintf(why, len, "%s: rseq cpu_id %d, on CPU %d", who, (int)rs->cpu_id, cpu);
			return;
		}
	}
}

static void *other(void *arg)
{
	while (!go)
		fid_nap_ms(10);
	check_rseq(thread_why, sizeof(thread_why), "second thread");
	return NULL;
}

int main(int argc, char **argv)
{
	char why[256] = "";
	pthread_t th;

	fid_init(argc, argv);
	if (__rseq_size == 0)
		fid_die("glibc did not register rseq (glibc.pthread.rseq=0?)");
	if (pthread_create(&th, NULL, other, NULL))
		fid_die("pthread_create");
	fid_ready_wait();

	check_rseq(why, sizeof(why), "main thread");
	if (why[0])
		fid_fail("%s", why);
	go = 1;
	pthread_join(th, NULL);
	if (thread_why[0])
		fid_fail("%s", thread_why);
	fid_finish();
}
