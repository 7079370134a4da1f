// SPDX-License-Identifier: GPL-2.0
/*
 * SIGCONT handlers of running processes: the main thread and a child
 * process each count the SIGCONTs they get, a second thread of the main
 * process spins (it is running, not sleeping, at the checkpoint). Nobody
 * sends SIGCONT, so after the word both counts are 0 and the spinner
 * still runs. Raw CRIU sends none (it seizes running tasks and lets them
 * go without a signal); a checkpoint or restart that ends a group stop
 * with a SIGCONT the program sees fails here. (Processes that were
 * stopped stay stopped: prog_stopped.c.)
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "fidelity.h"

static volatile sig_atomic_t conts;
static volatile unsigned long spins;

static void on_cont(int sig)
{
	conts++;
}

static void count_sigcont(void)
{
	struct sigaction sa = { .sa_handler = on_cont, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCONT, &sa, NULL))
		fid_die("sigaction: %s", strerror(errno));
}

static void *spinner(void *arg)
{
	for (;;)
		spins++;
	return NULL;
}

/* The child: counts too, and exits with its count once it hears the word. */
static pid_t child(int ready_fd)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	count_sigcont();
	if (write(ready_fd, "r", 1) != 1)
		_exit(100);
	while (access(fid_path("go"), F_OK))
		fid_nap_ms(20);
	_exit(conts > 99 ? 99 : conts);
}

int main(int argc, char **argv)
{
	unsigned long before;
	pthread_t th;
	int p[2], st, i;
	pid_t kid;
	char c;

	fid_init(argc, argv);
	count_sigcont();
	if (pipe(p))
		fid_die("pipe: %s", strerror(errno));
	kid = child(p[1]);
	if (kid < 0)
		fid_die("fork: %s", strerror(errno));
	if (read(p[0], &c, 1) != 1)
		fid_die("the child did not get ready");
	close(p[0]);
	close(p[1]);
	if (pthread_create(&th, NULL, spinner, NULL))
		fid_die("pthread_create failed");
	fid_ready_wait();

	FID_CHECK(conts == 0, "the process got %d SIGCONT", (int)conts);
	/* it runs: a loaded TCG guest may not schedule it for a while */
	before = spins;
	for (i = 0; i < 200 && spins == before; i++)
		fid_nap_ms(50);
	FID_CHECK(spins != before, "the spinning thread did not run in 10 s");
	if (waitpid(kid, &st, 0) != kid)
		fid_fail("waitpid: %s", strerror(errno));
	else if (!WIFEXITED(st))
		fid_fail("the child did not exit (status 0x%x)", st);
	else
		FID_CHECK(WEXITSTATUS(st) == 0, "the child got %d SIGCONT", WEXITSTATUS(st));
	FID_CHECK(conts == 0, "the process got %d SIGCONT by the end", (int)conts);
	fid_finish();
}
