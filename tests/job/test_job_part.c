// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator's side of a job's parts (usr/job/part.c) against
 * stand-in parts: shell lines run through a launch template, as a part
 * on another node is run through srun or ssh. A part's beat is no step;
 * a part that beat and then falls silent is lost after CRS_PART_SILENCE_S
 * and its launcher ended; a part that never beats (an older crdbg) is
 * waited for until the step's timeout, as before. A part run by a join
 * on another terminal (part-join.c) is spoken to over the join's socket,
 * and its exit status is the one its join sent. Parts through a
 * transport (part-transport.c) are the transport's, as a set.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <crdbg/job.h>
#include "clock.h"
#include "parts.h"

static char *const part_argv[] = { "crdbg", "checkpoint", "1", NULL };

/* A part "on node ghost" that is the shell line sh. */
static int start_stand_in(struct job_part *p, const char *sh)
{
	char err[256];

	job_parts_init(p, 1, NULL);
	return job_part_start(p, "ghost", sh, part_argv, err, sizeof(err));
}

/* Seconds since t0, a crs_clock_ms() reading. */
static double since_s(double t0)
{
	return (crs_clock_ms() - t0) / 1000;
}

FIXTURE(part) {
	struct job_part p;
};

FIXTURE_SETUP(part)
{
	signal(SIGPIPE, SIG_IGN);
	/* nothing of its own for the teardown to end, until a test starts it */
	job_parts_init(&self->p, 1, NULL);
}

FIXTURE_TEARDOWN(part)
{
	job_parts_finish(&self->p, 1, NULL, 1);
}

TEST_F(part, beat_is_no_step)
{
	ASSERT_EQ(0, start_stand_in(&self->p,
				    "printf 'crdbg-part alive\\ncrdbg-part frozen\\ncrdbg-part alive\\n'; "
				    "exec sleep 600"));
	ASSERT_EQ(0, job_parts_wait(&self->p, 1, JOB_STEP_FROZEN, 60, NULL));
	EXPECT_TRUE(job_part_at(&self->p, JOB_STEP_FROZEN));
	EXPECT_TRUE(self->p.beats);
	EXPECT_FALSE(self->p.lost);
	EXPECT_FALSE(job_part_over(&self->p));
}

/*
 * Two parts that beat once and fall silent: one whose launcher ends on
 * SIGTERM (srun passing it on), one whose launcher ignores it (a node
 * that does not answer), killed LOST_GRACE_S later. One wait for both.
 */
TEST_F_TIMEOUT(part, silent_after_a_beat_is_lost, 120)
{
	struct job_part ps[2];
	double t0 = crs_clock_ms();

	ASSERT_EQ(0, start_stand_in(&ps[0], "printf 'crdbg-part alive\\n'; exec sleep 600"));
	ASSERT_EQ(0, start_stand_in(&ps[1],
				    "trap '' TERM; printf 'crdbg-part alive\\n'; sleep 600 & wait"));
	ps[1].index = 1;
	EXPECT_EQ(0, job_parts_wait(ps, 2, JOB_STEP_FROZEN, 100, NULL));
	EXPECT_GE(since_s(t0), CRS_PART_SILENCE_S);
	EXPECT_LT(since_s(t0), 100) TH_LOG("the silence was not noticed before the timeout");
	for (int i = 0; i < 2; i++) {
		EXPECT_TRUE(ps[i].lost);
		EXPECT_TRUE(job_part_over(&ps[i]));
		EXPECT_FALSE(job_part_at(&ps[i], JOB_STEP_FROZEN));
		EXPECT_NE(NULL, strstr(ps[i].last_err,
				       "no word from it for 20 s: its node is lost or hung"))
			TH_LOG("last_err: %s", ps[i].last_err);
	}
	/* the launchers were told to end, long before finish's own grace */
	job_parts_finish(ps, 2, NULL, 60);
	EXPECT_LT(since_s(t0), 60);
	ASSERT_TRUE(WIFSIGNALED(ps[0].status)) TH_LOG("status 0x%x", ps[0].status);
	EXPECT_EQ(SIGTERM, WTERMSIG(ps[0].status));
	ASSERT_TRUE(WIFSIGNALED(ps[1].status)) TH_LOG("status 0x%x", ps[1].status);
	EXPECT_EQ(SIGKILL, WTERMSIG(ps[1].status));
}

TEST_F(part, never_beats_waits_for_the_timeout)
{
	ASSERT_EQ(0, start_stand_in(&self->p, "exec sleep 600"));
	EXPECT_EQ(-ETIMEDOUT, job_parts_wait(&self->p, 1, JOB_STEP_FROZEN, 2, NULL));
	EXPECT_FALSE(self->p.lost);
	EXPECT_FALSE(job_part_over(&self->p));
}

/* One message of the codec, as a line, to fd. */
static int say(int fd, const struct job_part_msg *m)
{
	char line[JOB_PART_LINE_MAX];
	int len = job_part_msg_format(m, line, sizeof(line) - 1);

	if (len < 0)
		return len;
	line[len++] = '\n';
	return write(fd, line, (size_t)len) == len ? 0 : -EIO;
}

/*
 * A joined part: awaiting, it is not over; joined, its steps and orders
 * go over the join's socket; finish half-closes our side, and its exit
 * status is the one its join's exit step says (it is not our child).
 */
/*
 * A restart's part that holds a launcher's agents keeps its stdin past
 * the release and is told end-agents with the highest exit code of the
 * others once they all ended (the daemons its agents stood for), and only
 * then; the others' stdin closes at once, as before.
 */
TEST(agents_end_after_the_others)
{
	char dir[] = "/tmp/crdbg-agents-XXXXXX", sh[3][256], got[64] = "", err[256];
	struct job_part ps[3];
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_NE(NULL, mkdtemp(dir));
	/* the agents' part: its line, and whether both others had ended by then */
	snprintf(sh[0], sizeof(sh[0]),
		 "IFS= read -r l; [ -e %s/1 ] && [ -e %s/2 ] && printf '%%s\\n' \"$l\" >%s/got",
		 dir, dir, dir);
	/* each other part reads its end of file first: no order but the closed stdin */
	snprintf(sh[1], sizeof(sh[1]), "cat >/dev/null; sleep 0.3; touch %s/1; exit 3", dir);
	snprintf(sh[2], sizeof(sh[2]), "cat >/dev/null; touch %s/2; exit 0", dir);
	job_parts_init(ps, 3, NULL);
	for (int i = 0; i < 3; i++) {
		ps[i].index = (size_t)i;
		ASSERT_EQ(0, job_part_start(&ps[i], "ghost", sh[i], part_argv, err, sizeof(err)))
			TH_LOG("%s", err);
	}
	ps[0].holds_agents = true;
	job_parts_finish(ps, 3, NULL, 0);
	f = fopen(strcat(strcpy(err, dir), "/got"), "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(got, sizeof(got), f));
	fclose(f);
	EXPECT_STREQ("end-agents code=3\n", got);
	EXPECT_EQ(0, WEXITSTATUS(ps[0].status));
	EXPECT_EQ(3, WEXITSTATUS(ps[1].status));
	ASSERT_EQ(0, system(strcat(strcpy(err, "rm -rf "), dir)));
}

TEST(joined_part_over_its_socket)
{
	struct job_part p;
	char want[32], got[64];
	int sv[2], len;
	ssize_t n;

	signal(SIGPIPE, SIG_IGN);
	job_parts_init(&p, 1, NULL);
	job_part_join_await(&p, "node2");
	EXPECT_FALSE(job_part_over(&p));
	EXPECT_EQ(-ETIMEDOUT, job_parts_wait(&p, 1, JOB_STEP_FROZEN, 1, NULL));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	job_part_join_attach(&p, dup(sv[0]), sv[0]);

	ASSERT_EQ(0, say(sv[1], &(struct job_part_msg){ .step = JOB_STEP_FROZEN }));
	ASSERT_EQ(0, job_parts_wait(&p, 1, JOB_STEP_FROZEN, 60, NULL));
	EXPECT_TRUE(job_part_at(&p, JOB_STEP_FROZEN));

	job_parts_send(&p, 1, JOB_ORDER_DUMP);
	len = job_part_order_format(JOB_ORDER_DUMP, want, sizeof(want) - 1);
	ASSERT_LT(0, len);
	want[len++] = '\n';
	n = read(sv[1], got, sizeof(got));
	ASSERT_EQ(len, n);
	EXPECT_EQ(0, memcmp(want, got, (size_t)len));

	ASSERT_EQ(0, say(sv[1], &(struct job_part_msg){ .step = JOB_STEP_EXIT,
						       .exit_status = 3 << 8 }));
	ASSERT_EQ(0, shutdown(sv[1], SHUT_WR));
	job_parts_finish(&p, 1, NULL, 10);
	EXPECT_EQ(0, read(sv[1], got, sizeof(got)));	/* our side is closed */
	EXPECT_TRUE(job_part_over(&p));
	EXPECT_EQ(3 << 8, p.status);
	close(sv[1]);
}

/* A transport that records its calls; part 1 ends at the first wait. */
struct fake_tp {
	int starts, sends, waits, finishes;
	char ranks[2][16];
	enum job_part_order order;
};

static int fake_start(void *arg, size_t part, const char *node, const char *ranks,
		      char *const argv[], char *err, size_t errlen)
{
	struct fake_tp *f = arg;

	if (part > 1 || strcmp(node, "node1") || strcmp(argv[1], "checkpoint"))
		return -EINVAL;
	snprintf(f->ranks[part], sizeof(f->ranks[part]), "%s", ranks);
	f->starts++;
	return 0;
}

static void fake_send(void *arg, enum job_part_order order)
{
	struct fake_tp *f = arg;

	f->order = order;
	f->sends++;
}

static int fake_wait(void *arg, enum job_part_step step, int timeout_s,
		     struct crs_part_report *rep, size_t n)
{
	struct fake_tp *f = arg;

	f->waits++;
	if (n != 2)
		return -EINVAL;
	rep[0].msg.step = step;
	rep[1].over = true;
	snprintf(rep[1].why, sizeof(rep[1].why), "its server is gone");
	return 0;
}

static void fake_finish(void *arg, int grace_s, struct crs_part_report *rep, size_t n)
{
	struct fake_tp *f = arg;

	f->finishes++;
	for (size_t i = 0; i < n; i++)
		rep[i].status = grace_s;
}

TEST(transport_parts_are_its_set)
{
	struct fake_tp f = { 0 };
	const struct crs_job_transport tp = {
		.start = fake_start, .send = fake_send, .wait = fake_wait,
		.finish = fake_finish, .arg = &f,
	};
	struct job_part ps[2];
	char err[256];

	job_parts_init(ps, 2, &tp);
	ps[1].index = 1;
	ps[1].ranks = "4-5";
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, job_part_start(&ps[i], "node1", NULL, part_argv, err, sizeof(err)));
	EXPECT_EQ(2, f.starts);
	EXPECT_STREQ("-", f.ranks[0]);
	EXPECT_STREQ("4-5", f.ranks[1]);

	job_parts_send(ps, 2, JOB_ORDER_DUMP);
	EXPECT_EQ(1, f.sends);
	EXPECT_EQ(JOB_ORDER_DUMP, f.order);

	EXPECT_EQ(0, job_parts_wait(ps, 2, JOB_STEP_DUMPED, 5, NULL));
	EXPECT_EQ(1, f.waits);
	EXPECT_TRUE(job_part_at(&ps[0], JOB_STEP_DUMPED));
	EXPECT_FALSE(job_part_over(&ps[0]));
	EXPECT_TRUE(job_part_over(&ps[1]));
	EXPECT_STREQ("its server is gone", ps[1].last_err);

	job_parts_kill_silent(ps, 2);	/* nothing of ours to kill */
	job_parts_finish(ps, 2, NULL, 7);
	EXPECT_EQ(1, f.finishes);
	EXPECT_EQ(7, ps[0].status);
	EXPECT_EQ(7, ps[1].status);
}

TEST_HARNESS_MAIN
