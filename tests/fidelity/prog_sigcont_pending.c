// SPDX-License-Identifier: GPL-2.0
/*
 * Pending and blocked SIGCONT: the main process and a child each block
 * SIGCONT (it has a handler) and have one pending for the whole process
 * (kill(getpid())) and one pending on their second thread alone (tgkill).
 * A third child, also blocking SIGCONT, is in a group stop (SIGSTOP): it
 * has no SIGCONT pending (a stop signal discards them) and must stay
 * stopped, whatever puts the others' SIGCONTs back.
 *
 * After the word each of the two processes finds SIGCONT pending where it
 * was (ShdPnd of /proc/self/status, SigPnd of each thread's status, and
 * sigpending()), then unblocks it, the main thread first (it takes the
 * process-wide one), then the second thread (its own): the handler runs
 * exactly once in each, and nothing is left pending. A group stop the
 * checkpoint used would have discarded both (kernel/signal.c,
 * prepare_signal()); raw CRIU dumps and restores pending signals.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "fidelity.h"

static __thread volatile sig_atomic_t conts;	/* SIGCONT handled by this thread */
static volatile sig_atomic_t total;		/* by any thread of the process */

static void on_cont(int sig)
{
	conts++;
	total++;
}

/* The second thread: holds its own SIGCONT until told to unblock it. */
static pid_t second_tid;
static volatile int second_go, second_conts = -1;

static void *second(void *arg)
{
	sigset_t cont;

	second_tid = gettid();
	while (!second_go)
		fid_nap_ms(10);
	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	pthread_sigmask(SIG_UNBLOCK, &cont, NULL);	/* its SIGCONT runs here */
	second_conts = conts;
	return NULL;
}

/* Bit SIGCONT of the mask named key ("ShdPnd", "SigPnd") in a status file. */
static int status_sigcont(const char *path, const char *key)
{
	char line[256];
	unsigned long long mask;
	size_t klen = strlen(key);
	int bit = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':' &&
		    sscanf(line + klen + 1, "%llx", &mask) == 1) {
			bit = !!(mask & (1ULL << (SIGCONT - 1)));
			break;
		}
	fclose(f);
	return bit;
}

static int thread_sigcont(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	return status_sigcont(path, "SigPnd");
}

/* Block SIGCONT, start the second thread, queue both SIGCONTs. */
static pthread_t set_up(void)
{
	struct sigaction sa = { .sa_handler = on_cont };
	sigset_t cont;
	pthread_t th;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCONT, &sa, NULL))
		fid_die("sigaction: %s", strerror(errno));
	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	sigprocmask(SIG_BLOCK, &cont, NULL);	/* the second thread inherits it */
	if (pthread_create(&th, NULL, second, NULL))
		fid_die("pthread_create failed");
	while (!second_tid)
		fid_nap_ms(5);
	kill(getpid(), SIGCONT);
	syscall(SYS_tgkill, getpid(), second_tid, SIGCONT);
	return th;
}

/* After the word: where SIGCONT is pending, then each handled once. */
static void check(pthread_t th, const char *who)
{
	sigset_t pend, cont;

	sigpending(&pend);
	FID_CHECK(sigismember(&pend, SIGCONT), "%s: SIGCONT is not pending", who);
	FID_CHECK(status_sigcont("/proc/self/status", "ShdPnd") == 1,
		  "%s: SIGCONT is not pending process-wide (ShdPnd)", who);
	FID_CHECK(thread_sigcont(gettid()) == 0,
		  "%s: SIGCONT is pending on the main thread's own queue", who);
	FID_CHECK(thread_sigcont(second_tid) == 1,
		  "%s: SIGCONT is not pending on the second thread (SigPnd)", who);
	FID_CHECK(total == 0, "%s: the handler ran %d times before SIGCONT was unblocked",
		  who, (int)total);

	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	sigprocmask(SIG_UNBLOCK, &cont, NULL);	/* the process-wide one runs here */
	FID_CHECK(conts == 1, "%s: the main thread handled %d SIGCONT, not 1", who, (int)conts);
	second_go = 1;
	pthread_join(th, NULL);
	FID_CHECK(second_conts == 1, "%s: the second thread handled %d SIGCONT, not 1", who,
		  second_conts);
	FID_CHECK(total == 2, "%s: %d SIGCONT handled in all, not 2", who, (int)total);
	sigpending(&pend);
	FID_CHECK(!sigismember(&pend, SIGCONT), "%s: a SIGCONT is still pending", who);
}

/* The child: the same state; it sends its verdict up the pipe and exits. */
static pid_t child(int ready_fd, int result_fd)
{
	pid_t pid = fork();
	pthread_t th;

	if (pid)
		return pid;
	th = set_up();
	if (write(ready_fd, "r", 1) != 1)
		_exit(2);
	while (access(fid_path("go"), F_OK))
		fid_nap_ms(20);
	check(th, "child");
	if (write(result_fd, fid_why[0] ? fid_why : "pass", strlen(fid_why[0] ? fid_why : "pass"))
	    < 0)
		_exit(2);
	_exit(fid_why[0] ? 1 : 0);
}

/* A child in a group stop, SIGCONT blocked and handled: nothing pending. */
static pid_t stopped_child(void)
{
	struct sigaction sa = { .sa_handler = on_cont };
	int p[2], st;
	sigset_t cont;
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return pid;
	if (!pid) {
		setpgid(0, 0);
		sigemptyset(&sa.sa_mask);
		sigaction(SIGCONT, &sa, NULL);
		sigemptyset(&cont);
		sigaddset(&cont, SIGCONT);
		sigprocmask(SIG_BLOCK, &cont, NULL);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	if (read(p[0], &c, 1) != 1)
		fid_die("the child to stop did not get ready");
	close(p[0]);
	close(p[1]);
	kill(pid, SIGSTOP);
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st))
		fid_die("the child to stop did not stop");
	return pid;
}

int main(int argc, char **argv)
{
	int ready[2], result[2], st, i;
	char c, why[1024];
	pid_t kid, stopped;
	ssize_t n;
	pthread_t th;

	fid_init(argc, argv);
	if (pipe(ready) || pipe(result))
		fid_die("pipe: %s", strerror(errno));
	kid = child(ready[1], result[1]);
	if (kid < 0)
		fid_die("fork: %s", strerror(errno));
	if (read(ready[0], &c, 1) != 1)
		fid_die("the child did not get ready");
	close(ready[0]);
	close(ready[1]);
	close(result[1]);
	stopped = stopped_child();
	if (stopped < 0)
		fid_die("fork: %s", strerror(errno));
	th = set_up();
	fid_ready_wait();

	check(th, "main");
	for (i = 0; i < 5; i++) {
		c = fid_proc_state(stopped);
		FID_CHECK(c == 'T', "the stopped child is in state %c", c);
		if (c != 'T')
			break;
		fid_nap_ms(100);
	}
	kill(stopped, SIGKILL);
	FID_CHECK(waitpid(stopped, &st, 0) == stopped && WIFSIGNALED(st),
		  "the stopped child did not die of SIGKILL (status 0x%x)", st);
	if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st))
		fid_fail("the child did not exit normally");
	n = read(result[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	FID_CHECK(!strcmp(why, "pass"), "%s", why[0] ? why : "child: no verdict");
	fid_finish();
}
