// SPDX-License-Identifier: GPL-2.0
/*
 * sigaltstack: the main thread and a second thread each have their own
 * alternate signal stack and an SA_ONSTACK handler. After the word both
 * stacks are still registered, and a signal's handler runs on them.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>

#include "fidelity.h"

#define ALT_SIZE (64 * 1024)

static char alt_main[ALT_SIZE], alt_thread[ALT_SIZE];
static __thread volatile unsigned long on_stack_at;
static volatile int go;
static char thread_why[200];

static void handler(int sig)
{
	char here;

	on_stack_at = (unsigned long)&here;
}

/* Is the registered alternate stack buf, and does a handler run there? */
static const char *check_alt(char *buf)
{
	stack_t ss;

	if (sigaltstack(NULL, &ss))
		return "sigaltstack failed";
	if (ss.ss_sp != buf || ss.ss_size != ALT_SIZE || ss.ss_flags != 0)
		return "alternate stack changed";
	on_stack_at = 0;
	syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1);
	if (on_stack_at < (unsigned long)buf || on_stack_at >= (unsigned long)buf + ALT_SIZE)
		return "handler did not run on the alternate stack";
	return NULL;
}

static void *other(void *arg)
{
	stack_t ss = { .ss_sp = alt_thread, .ss_size = ALT_SIZE };
	const char *why;

	sigaltstack(&ss, NULL);
	while (!go)
		fid_nap_ms(10);
	why = check_alt(alt_thread);
	if (why)
		snprintf(thread_why, sizeof(thread_why), "second thread: %s", why);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_ONSTACK };
	stack_t ss = { .ss_sp = alt_main, .ss_size = ALT_SIZE };
	const char *why;
	pthread_t th;

	fid_init(argc, argv);
	sigaction(SIGUSR1, &sa, NULL);
	sigaltstack(&ss, NULL);
	if (pthread_create(&th, NULL, other, NULL))
		fid_die("pthread_create");
	fid_ready_wait();
	why = check_alt(alt_main);
	if (why)
		fid_fail("main thread: %s", why);
	go = 1;
	pthread_join(th, NULL);
	if (thread_why[0])
		fid_fail("%s", thread_why);
	fid_finish();
}
