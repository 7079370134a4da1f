// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg.ko's multicast group "events" (frozen, thawed, hook ran, exited,
 * released when the owner socket closes), who may listen to it, and the
 * QUERY dump that lists every frozen process.
 */
#include <grp.h>
#include <linux/genetlink.h>
#include <sched.h>
#include <linux/genetlink.h>
#include <sys/socket.h>

#include "kmod-test.h"

struct event {
	uint32_t type;
	pid_t pid, tid;
};

/* Next crdbg event on @fd within a few seconds; 0 or -errno. */
static int next_event(int fd, struct event *ev)
{
	static char buf[16384];
	static int len, off;

	for (;;) {
		while (off < len) {
			struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);
			struct nlattr *tb[CRDBG_A_MAX + 1];

			if (!NLMSG_OK(h, len - off)) {
				off = len;
				break;
			}
			off += NLMSG_ALIGN(h->nlmsg_len);
			if (h->nlmsg_type < NLMSG_MIN_TYPE ||
			    ((struct genlmsghdr *)NLMSG_DATA(h))->cmd != CRDBG_CMD_EVENT)
				continue;
			if (crdbg_nl_parse_message(h, h->nlmsg_len, tb) || !tb[CRDBG_A_EVENT] ||
			    !tb[CRDBG_A_PID])
				return -EPROTO;
			ev->type = nla_get_u32(tb[CRDBG_A_EVENT]);
			ev->pid = (pid_t)nla_get_u32(tb[CRDBG_A_PID]);
			ev->tid = tb[CRDBG_A_TID] ? (pid_t)nla_get_u32(tb[CRDBG_A_TID]) : 0;
			return 0;
		}
		len = (int)recv(fd, buf, sizeof(buf), 0);
		off = 0;
		if (len < 0) {
			len = 0;
			return -errno;
		}
	}
}

/*
 * Wait for an event of @type about @pid. Other events are kept, so a test
 * does not depend on the order of events from different threads.
 */
static int expect_event(int fd, uint32_t type, pid_t pid, pid_t *tid)
{
	static struct event seen[64];
	static int nseen;
	struct event ev = { 0 };
	int ret, i;

	for (i = 0; i < nseen; i++) {
		if (seen[i].type == type && seen[i].pid == pid) {
			if (tid)
				*tid = seen[i].tid;
			seen[i] = seen[--nseen];
			return 0;
		}
	}
	while ((ret = next_event(fd, &ev)) == 0) {
		if (ev.type == type && ev.pid == pid) {
			if (tid)
				*tid = ev.tid;
			return 0;
		}
		if (nseen < 64)
			seen[nseen++] = ev;
	}
	return ret;
}

FIXTURE(events) {
	struct crdbg_nl g;
	struct freeze_backend *b;
	struct kt_shared *sh;
	pid_t pid;
	int fd;
	char err[256];
};

FIXTURE_SETUP(events)
{
	struct timeval tv = { 10, 0 };

	self->sh = kt_shared_new();
	ASSERT_NE(NULL, self->sh);
	self->pid = kt_spawn_spinner(self->sh, 1);
	ASSERT_LT(0, self->pid);
	if (crdbg_nl_open(&self->g, self->err, sizeof(self->err)) == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded");
	ASSERT_EQ(0, crdbg_nl_subscribe_events(&self->g, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	self->fd = crdbg_nl_fd(&self->g);
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, kt_open(&self->b, self->err, sizeof(self->err)));
}

FIXTURE_TEARDOWN(events)
{
	kt_kill(self->pid);
	freeze_backend_close(self->b);
	crdbg_nl_close(&self->g);
}

TEST_F(events, frozen_thawed_hook_exited)
{
	pid_t tid = 0;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_FROZEN, self->pid, NULL));
	ASSERT_EQ(0, freeze_push_hook(self->b, self->pid, self->sh->tids[0],
			       (uint64_t)(uintptr_t)crdbg_hook_trampoline, 0, self->err,
			       sizeof(self->err)));
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_THAWED, self->pid, NULL));
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_HOOK_RAN, self->pid, &tid));
	EXPECT_EQ(self->sh->tids[0], tid);

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_FROZEN, self->pid, NULL));
	kill(self->pid, SIGKILL);
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_EXITED, self->pid, NULL));
	waitpid(self->pid, NULL, 0);
	self->pid = 0;
}

TEST_F(events, released_when_owner_closes)
{
	struct freeze_backend *b2;

	ASSERT_EQ(0, kt_open(&b2, self->err, sizeof(self->err)));
	ASSERT_EQ(0, freeze_process(b2, self->pid, 0, self->err, sizeof(self->err)));
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_FROZEN, self->pid, NULL));
	freeze_backend_close(b2);
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_RELEASED, self->pid, NULL));
}

#define NOBODY 65534

/* In a child: drop to nobody, with no capability left. 0 or -errno. */
static int become_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -errno;
	return 0;
}

/* Join the events group on a socket of this process's network namespace. */
static int join_events(struct crdbg_nl *g, char *err, size_t len)
{
	int rc = crdbg_nl_open(g, err, len);

	return rc ? rc : crdbg_nl_subscribe_events(g, err, len);
}

/*
 * Is a message of the crdbg family queued on fd? (Acknowledgements of
 * the family lookup do not count.)
 */
static bool crdbg_message_queued(int fd, int family, char *buf, size_t size)
{
	ssize_t len;

	while ((len = recv(fd, buf, size, MSG_DONTWAIT)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len))
			if (h->nlmsg_type == family)
				return true;
	}
	return false;
}

/* A local user without privileges may not join the group at all. */
TEST_F(events, unprivileged_listener_is_refused)
{
	char err[256];
	int status;
	pid_t child = fork();

	ASSERT_LE(0, child);
	if (child == 0) {
		struct crdbg_nl g;

		if (become_nobody())
			_exit(3);
		_exit(join_events(&g, err, sizeof(err)) == -EPERM ? 0 : 1);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("uid %d joined crdbg's events group (or could not drop privileges)", NOBODY);
}

/*
 * A listener in another network namespace (a container's, where its root
 * may join the group) hears nothing: events name init-namespace pids and
 * stay in the initial network namespace. (The listener is root in a new
 * network namespace rather than an unprivileged user in new user and
 * network namespaces: the test guest runs chrooted, where unshare()
 * refuses CLONE_NEWUSER.) The parent sees its own FROZEN and THAWED
 * events before the child looks, and a multicast is queued on every
 * listener before the freeze returns, so "nothing queued" is final.
 */
TEST_F(events, other_netns_listener_gets_nothing)
{
	int go[2], ready[2], status;
	char c = 0;
	pid_t child;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct crdbg_nl g;
		char err[256], buf[4096];

		close(go[1]);
		close(ready[0]);
		if (unshare(CLONE_NEWNET))
			_exit(4);
		if (join_events(&g, err, sizeof(err)))
			_exit(3);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(5);
		_exit(crdbg_message_queued(crdbg_nl_fd(&g), g.family, buf,
					   sizeof(buf)) ? 1 : 0);
	}
	close(go[0]);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		ASSERT_EQ(child, waitpid(child, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		TH_LOG("the listener could not %s", WEXITSTATUS(status) == 4 ?
		       "unshare its network namespace" : "join the group as root");
		ASSERT_TRUE(false);
	}
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_FROZEN, self->pid, NULL));
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	EXPECT_EQ(0, expect_event(self->fd, CRDBG_EVENT_THAWED, self->pid, NULL));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("a listener in another network namespace heard the events");
}

struct listing {
	pid_t pid[8];
	uint32_t flags[8], owner[8];
	int n;
};

static int parse_listing(struct nlattr **attrs, void *arg)
{
	struct listing *l = arg;

	if (!attrs[CRDBG_A_PID] || !attrs[CRDBG_A_FLAGS] || !attrs[CRDBG_A_OWNER_PORTID])
		return -EPROTO;
	if (l->n < 8) {
		l->pid[l->n] = (pid_t)nla_get_u32(attrs[CRDBG_A_PID]);
		l->flags[l->n] = nla_get_u32(attrs[CRDBG_A_FLAGS]);
		l->owner[l->n] = nla_get_u32(attrs[CRDBG_A_OWNER_PORTID]);
	}
	l->n++;
	return 0;
}

TEST_F(events, query_dump_lists_frozen)
{
	struct kt_shared *sh2 = kt_shared_new();
	struct listing l = { .n = 0 };
	struct crdbg_nl g;
	pid_t pid2;
	int i, seen = 0;

	ASSERT_NE(NULL, sh2);
	pid2 = kt_spawn_spinner(sh2, 1);
	ASSERT_LT(0, pid2);
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	ASSERT_EQ(0, freeze_process(self->b, pid2, FREEZE_F_PERSIST, self->err, sizeof(self->err)));
	ASSERT_EQ(0, crdbg_nl_open(&g, self->err, sizeof(self->err)));
	ASSERT_EQ(0, crdbg_nl_transact(&g, crdbg_nl_request(&g, CRDBG_CMD_QUERY, NLM_F_DUMP),
				       parse_listing, &l, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	crdbg_nl_close(&g);
	for (i = 0; i < l.n && i < 8; i++) {
		if (l.pid[i] == self->pid) {
			seen |= 1;
			EXPECT_EQ(0, l.flags[i]);
			EXPECT_NE(0, l.owner[i]);
		} else if (l.pid[i] == pid2) {
			seen |= 2;
			EXPECT_EQ(CRDBG_F_PERSIST, l.flags[i]);
			EXPECT_EQ(0, l.owner[i]);
		}
	}
	EXPECT_EQ(3, seen);
	EXPECT_EQ(0, freeze_thaw(self->b, pid2, self->err, sizeof(self->err)));
	kt_kill(pid2);
}

TEST_HARNESS_MAIN
