// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions and process groups. We are a session leader (the test starts
 * us with setsid). Child A leads its own process group, with grandchild
 * A1 in it; child B starts a new session, with grandchild B1 in a new
 * group of that session. After the word every pid, ppid, pgid and sid is
 * as recorded, and a signal to A's group reaches A and A1, not B.
 */
#include <signal.h>
#include <sys/wait.h>

#include "fidelity.h"

struct ids {
	pid_t pid, ppid, pgid, sid;
};

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	got_usr1 = 1;
}

/* Every process keeps its own ids and checks them after the word. */
static void record(struct ids *me)
{
	me->pid = getpid();
	me->ppid = getppid();
	me->pgid = getpgid(0);
	me->sid = getsid(0);
}

static bool same(const struct ids *was)
{
	return getpid() == was->pid && getppid() == was->ppid && getpgid(0) == was->pgid &&
	       getsid(0) == was->sid;
}

/*
 * A descendant: at the word check its ids, then wait until the root says
 * it signalled group A. Exit status: 1 if ids changed, 2 if SIGUSR1 came
 * to the wrong group (or not to A), 0 if all is well.
 */
static int descendant(bool in_a, const struct ids *was)
{
	int i;

	while (access(fid_path("go"), F_OK))
		fid_nap_ms(20);
	if (!same(was))
		return 1;
	for (i = 0; i < 1500 && access(fid_path("sent"), F_OK); i++)
		fid_nap_ms(20);
	fid_nap_ms(100);
	return in_a == !!got_usr1 ? 0 : 2;
}

/* A child leading a group (A) or a session (B), with a grandchild. */
static pid_t spawn(bool in_a, bool new_session)
{
	struct ids me;
	pid_t pid = fork(), kid;
	int st, mine;

	if (pid)
		return pid;
	if (new_session)
		setsid();
	else
		setpgid(0, 0);
	record(&me);
	kid = fork();
	if (kid == 0) {
		if (new_session)
			setpgid(0, 0);
		record(&me);
		_exit(descendant(in_a, &me) * 10);
	}
	mine = descendant(in_a, &me);
	if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st))
		_exit(99);
	_exit(mine + WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t a, b, sid = getsid(0);
	int st, i;

	fid_init(argc, argv);
	if (sid != getpid())
		fid_die("not a session leader (start it with setsid)");
	sigaction(SIGUSR1, &sa, NULL);
	a = spawn(true, false);
	setpgid(a, a);		/* either of us may do it first */
	b = spawn(false, true);
	for (i = 0; i < 500 && getsid(b) != b; i++)
		fid_nap_ms(20);	/* B's setsid() */
	FID_CHECK(getpgid(a) == a && getsid(a) == sid, "A: pgid %d sid %d", getpgid(a), getsid(a));
	FID_CHECK(getsid(b) == b, "B did not start a session");
	if (fid_why[0])
		fid_finish();
	fid_ready_wait();

	FID_CHECK(getsid(0) == getpid() && getpgid(0) == getpid(), "our own session or group changed");
	FID_CHECK(getpgid(a) == a && getsid(a) == sid, "A: pgid %d sid %d", getpgid(a), getsid(a));
	FID_CHECK(getpgid(b) == b && getsid(b) == b, "B: pgid %d sid %d", getpgid(b), getsid(b));
	fid_nap_ms(300);	/* everyone checked their ids */
	kill(-a, SIGUSR1);
	fid_touch("sent");
	FID_CHECK(waitpid(a, &st, 0) == a && WIFEXITED(st) && !WEXITSTATUS(st),
		  "A's group: status %d (1 ids changed, 2 wrong signal; x10 grandchild)", WEXITSTATUS(st));
	FID_CHECK(waitpid(b, &st, 0) == b && WIFEXITED(st) && !WEXITSTATUS(st),
		  "B's session: status %d (1 ids changed, 2 wrong signal; x10 grandchild)", WEXITSTATUS(st));
	FID_CHECK(!got_usr1, "SIGUSR1 reached the session leader");
	fid_finish();
}
