// SPDX-License-Identifier: GPL-2.0
/*
 * Zombies: three children exit (status 42, status 7, killed by SIGTERM)
 * and are left unreaped; the second is seen with waitid(WNOWAIT) first.
 * After the word each is still a zombie child of ours with its status.
 */
#include <signal.h>
#include <sys/wait.h>

#include "fidelity.h"

static void wait_zombie(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT))
		fid_die("waitid %d: %s", pid, strerror(errno));
}

int main(int argc, char **argv)
{
	pid_t kid[3];
	siginfo_t si;
	int st, i;

	fid_init(argc, argv);
	if ((kid[0] = fork()) == 0)
		_exit(42);
	if ((kid[1] = fork()) == 0)
		_exit(7);
	if ((kid[2] = fork()) == 0) {
		pause();
		_exit(0);
	}
	kill(kid[2], SIGTERM);
	for (i = 0; i < 3; i++)
		wait_zombie(kid[i]);
	fid_ready_wait();
	for (i = 0; i < 3; i++)
		FID_CHECK(fid_proc_state(kid[i]) == 'Z', "child %d is in state %c, not Z",
			  kid[i], fid_proc_state(kid[i]));
	memset(&si, 0, sizeof(si));
	FID_CHECK(!waitid(P_PID, kid[1], &si, WEXITED | WNOWAIT) && si.si_pid == kid[1] &&
		  si.si_code == CLD_EXITED && si.si_status == 7,
		  "waitid(WNOWAIT) on the second child: pid %d code %d status %d",
		  si.si_pid, si.si_code, si.si_status);
	FID_CHECK(waitpid(kid[0], &st, WNOHANG) == kid[0] && WIFEXITED(st) && WEXITSTATUS(st) == 42,
		  "first child: not reaped with exit status 42");
	FID_CHECK(waitpid(kid[1], &st, WNOHANG) == kid[1] && WIFEXITED(st) && WEXITSTATUS(st) == 7,
		  "second child: not reaped with exit status 7");
	FID_CHECK(waitpid(kid[2], &st, WNOHANG) == kid[2] && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
		  "third child: not reaped as killed by SIGTERM");
	FID_CHECK(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD, "an extra child appeared");
	fid_finish();
}
