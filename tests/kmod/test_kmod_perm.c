// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg.ko permissions: a caller may act on a target only if it could
 * ptrace-attach to it. An unprivileged caller cannot freeze, thaw, query
 * or push into a root or other-uid process, and the target is untouched;
 * the same uid may; a /proc/<pid>/mem fd proves the right, any other fd
 * does not.
 */
#include <fcntl.h>
#include <grp.h>

#include "kmod-test.h"

#define NOBODY 65534
#define OTHER 65533

/* Run @fn as @uid in a child; returns the child's exit code. */
static int as_uid(uid_t uid, int (*fn)(pid_t, pid_t), pid_t target, pid_t target2)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		kt_child_setup();
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(100);
		_exit(fn(target, target2));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Exit code: 0 if every operation was refused with -EPERM, else a step number. */
static int try_everything(pid_t target, pid_t frozen)
{
	struct freeze_backend *b;
	struct freeze_thread t[4];
	char err[256];

	if (kt_open(&b, err, sizeof(err)))
		return 1;
	if (freeze_process(b, target, 0, err, sizeof(err)) != -EPERM)
		return 2;
	if (!strstr(err, "not allowed"))
		return 3;
	if (freeze_query(b, frozen, t, 4, err, sizeof(err)) != -EPERM)
		return 4;
	if (freeze_push_hook(b, frozen, 0, 0x1000, 0, err, sizeof(err)) != -EPERM)
		return 5;
	if (freeze_thaw(b, frozen, err, sizeof(err)) != -EPERM)
		return 6;
	freeze_backend_close(b);
	return 0;
}

/* Exit code: 0 if freeze, query and thaw of @target all worked. */
static int freeze_ok(pid_t target, pid_t unused)
{
	struct freeze_backend *b;
	struct freeze_thread t[4];
	char err[256];

	(void)unused;
	if (kt_open(&b, err, sizeof(err)))
		return 1;
	if (freeze_process(b, target, 0, err, sizeof(err)))
		return 2;
	if (freeze_query(b, target, t, 4, err, sizeof(err)) != 2)
		return 3;
	if (freeze_thaw(b, target, err, sizeof(err)))
		return 4;
	freeze_backend_close(b);
	return 0;
}

/* A spinner running as @uid (0 keeps root). */
static pid_t spinner_as(struct kt_shared *sh, uid_t uid)
{
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t th;
		static struct kt_spin_arg a;

		kt_child_setup();
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(100);
		prctl(PR_SET_DUMPABLE, 1);	/* setuid cleared it; ptrace needs it */
		a.sh = sh;
		pthread_create(&th, NULL, kt_spin_thread, &a);
		for (;;)
			pause();
	}
	while (pid > 0 && !sh->nr_started)
		kt_msleep(1);
	return pid;
}

FIXTURE(perm) {
	struct freeze_backend *b;
	struct kt_shared *root_sh, *frozen_sh;
	pid_t root_pid, frozen_pid;
	char err[256];
};

FIXTURE_SETUP(perm)
{
	self->root_sh = kt_shared_new();
	self->frozen_sh = kt_shared_new();
	ASSERT_NE(NULL, self->root_sh);
	ASSERT_NE(NULL, self->frozen_sh);
	self->root_pid = spinner_as(self->root_sh, 0);
	self->frozen_pid = spinner_as(self->frozen_sh, 0);
	ASSERT_LT(0, self->root_pid);
	ASSERT_LT(0, self->frozen_pid);
	if (kt_open(&self->b, self->err, sizeof(self->err)) == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded");
	/* a root target frozen by root, to try thaw/query/push on */
	ASSERT_EQ(0, freeze_process(self->b, self->frozen_pid, 0, self->err, sizeof(self->err)));
}

FIXTURE_TEARDOWN(perm)
{
	kt_kill(self->root_pid);
	kt_kill(self->frozen_pid);
	freeze_backend_close(self->b);
}

TEST_F(perm, nobody_cannot_touch_root)
{
	uint64_t a;
	struct kt_status st;

	EXPECT_EQ(0, as_uid(NOBODY, try_everything, self->root_pid, self->frozen_pid));
	/* untouched: still running, the other still frozen */
	a = self->root_sh->count[0];
	kt_msleep(50);
	EXPECT_LT(a, self->root_sh->count[0]);
	a = self->frozen_sh->count[0];
	kt_msleep(50);
	EXPECT_EQ(a, self->frozen_sh->count[0]);
	ASSERT_EQ(0, kt_status(&st, self->err, sizeof(self->err)));
	EXPECT_EQ(1, st.nr_frozen);
}

TEST_F(perm, other_uid_refused_same_uid_allowed)
{
	struct kt_shared *sh = kt_shared_new();
	pid_t other;
	uint64_t a;

	ASSERT_NE(NULL, sh);
	other = spinner_as(sh, OTHER);
	ASSERT_LT(0, other);
	EXPECT_EQ(0, as_uid(NOBODY, try_everything, other, self->frozen_pid));
	a = sh->count[0];
	kt_msleep(50);
	EXPECT_LT(a, sh->count[0]);
	/* positive control: the owner itself may */
	EXPECT_EQ(0, as_uid(OTHER, freeze_ok, other, 0));
	kt_kill(other);
}

static int nlmsg_with_fd(pid_t target, int fd, char *err, size_t len)
{
	int cmds[] = { CRDBG_CMD_FREEZE, CRDBG_CMD_THAW };
	struct crdbg_nl g;
	int ret;

	ret = crdbg_nl_open(&g, err, len);
	for (size_t i = 0; !ret && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct nl_msg *msg = crdbg_nl_request(&g, (uint8_t)cmds[i], 0);

		if (msg && (nla_put_u32(msg, CRDBG_A_PID, (uint32_t)target) ||
			    nla_put_u32(msg, CRDBG_A_PROC_MEM_FD, (uint32_t)fd))) {
			nlmsg_free(msg);
			msg = NULL;
		}
		ret = crdbg_nl_transact(&g, msg, NULL, NULL, err, len);
	}
	crdbg_nl_close(&g);
	return ret;
}

TEST_F(perm, proc_mem_fd_proof)
{
	char path[64];
	int fd, other;

	snprintf(path, sizeof(path), "/proc/%d/mem", self->root_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, nlmsg_with_fd(self->root_pid, fd, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	/* the mem fd of another process proves nothing about this one */
	snprintf(path, sizeof(path), "/proc/%d/mem", self->frozen_pid);
	other = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, other);
	EXPECT_EQ(-EPERM, nlmsg_with_fd(self->root_pid, other, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "PROC_MEM_FD")) TH_LOG("%s", self->err);
	close(other);
	other = open("/dev/null", O_RDONLY | O_CLOEXEC);
	EXPECT_EQ(-EPERM, nlmsg_with_fd(self->root_pid, other, self->err, sizeof(self->err)));
	close(other);
	EXPECT_EQ(-EBADF, nlmsg_with_fd(self->root_pid, 1000, self->err, sizeof(self->err)));
	close(fd);
}

TEST_HARNESS_MAIN
