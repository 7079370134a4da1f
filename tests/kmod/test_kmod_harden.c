// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg.ko against a hostile local user. The attacker is always an
 * unprivileged uid: the program's own when it runs unprivileged, ATTACKER
 * when it runs as root (it drops to it in a child). Its victims are a
 * setuid-root copy of this very program (--helper MODE, see helper_main()),
 * a zombie-led process, a non-descendant, other users' requests.
 *
 *   exec_race            a frozen child stopped inside execve() of the setuid
 *                        helper gets a hook, then commits root's creds: the
 *                        freeze ends, the hook never runs, the helper exits 0
 *   hooked_thread_execs  a hooked thread passes its return fd as stdout to the
 *                        setuid helper it execs, which writes the hook's
 *                        cookie to it: refused
 *   device_not_writable  /dev/crdbg is root's 0600 read-only probe
 *   socket_to_setuid     a netlink socket handed as stdout to the setuid helper,
 *                        which writes a FREEZE of a root process: -EPERM
 *   yama_non_descendant  ptrace_scope=1: a same-uid non-descendant cannot be
 *                        frozen nor hooked; a child can
 *   zombie_leader        a zombie leader does not hide a non-dumpable thread
 *   slow.throttled_freeze a FREEZE of a cgroup-throttled thread returns within
 *                        its grace and holds nobody up meanwhile
 *   slow.concurrent_fuzz >= 100,000 messages from 4 processes while targets
 *                        exit, exec and are frozen; the kernel stays untainted
 *
 * As root the program prepares what it needs itself (the setuid helper in a
 * tmpfs, ptrace_scope, a cgroup); run unprivileged it needs them prepared
 * (tests/guest/kmod.sh): CRDBG_KMOD_SUID_HELPER (a root-owned setuid copy of
 * this program), ptrace_scope >= 1 and CRDBG_KMOD_CGROUP (a cgroup2
 * directory it owns, with the cpu controller enabled for its children).
 */
#define KT_OWN_HOOK_ENTRY
#include <fcntl.h>
#include <grp.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>

#include "kmod-test.h"
#include "kmod-nl.h"

#define ATTACKER	12346
#define OTHER_USER	12347
#define BAD_TRAMPOLINE	0x1000ULL	/* unmapped: a hook that runs kills */

/* ---- the setuid helper ---- */

static int unhex(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	while (s[0] && s[1] && n < max && sscanf(s, "%2x", &b) == 1) {
		out[n++] = (unsigned char)b;
		s += 2;
	}
	return (int)n;
}

static void hex(const void *p, size_t len, char *out)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * len] = 0;
}

/*
 * "--helper spin": sleep until killed (a root-owned target);
 * "--helper exit": exit 0 after 100 ms (the image a race must not touch);
 * "--helper write-hex HEX": write the bytes to fd 1 in one write(), exit 0
 *  if it worked, 3 if it failed (a setuid program echoing what it is told).
 */
static void __attribute__((constructor)) helper_main(int argc, char **argv)
{
	unsigned char buf[512];
	int n;

	if (argc < 3 || strcmp(argv[1], "--helper"))
		return;
	if (!strcmp(argv[2], "spin")) {
		for (;;)
			pause();
	}
	if (!strcmp(argv[2], "exit")) {
		kt_msleep(100);
		_exit(0);
	}
	if (!strcmp(argv[2], "write-hex") && argc > 3) {
		n = unhex(argv[3], buf, sizeof(buf));
		_exit(write(1, buf, n) == n ? 0 : 3);
	}
	_exit(99);
}

static char helper_path[256];

/* The setuid-root helper: CRDBG_KMOD_SUID_HELPER, or made here as root. */
static const char *suid_helper(void)
{
	const char *env = getenv("CRDBG_KMOD_SUID_HELPER");
	char cmd[600];
	struct stat st;

	if (helper_path[0])
		return helper_path;
	if (env && *env) {
		snprintf(helper_path, sizeof(helper_path), "%s", env);
	} else if (getuid() == 0) {
		/* the build tree may be on a read-only 9p share: a tmpfs copy */
		snprintf(helper_path, sizeof(helper_path), "/tmp/crdbg-harden-%d/helper", getpid());
		snprintf(cmd, sizeof(cmd), "mkdir -p /tmp/crdbg-harden-%d && chmod 755 /tmp/crdbg-harden-%d && "
			 "cp /proc/%d/exe %s && chown 0:0 %s && chmod 4755 %s",
			 getpid(), getpid(), getpid(), helper_path, helper_path, helper_path);
		if (system(cmd))
			return NULL;
	} else {
		return NULL;
	}
	if (stat(helper_path, &st) || st.st_uid != 0 || !(st.st_mode & S_ISUID))
		return NULL;
	return helper_path;
}

/* ---- the attacker ---- */

/* A child that is @uid (when run as root) and exits with @fn's result. */
static pid_t start_as(uid_t uid, int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		kt_child_setup();
		if (getuid() == 0 &&
		    (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
			_exit(100);
		prctl(PR_SET_DUMPABLE, 1);
		_exit(fn(arg));
	}
	return pid;
}

static int reap(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* In a child: become the attacker uid (as root) and run @fn; its exit code. */
static int as_attacker(int (*fn)(void *), void *arg)
{
	return reap(start_as(ATTACKER, fn, arg));
}

static pid_t spawn_helper(const char *mode, int fd1)
{
	pid_t pid = fork();

	if (pid == 0) {
		kt_child_setup();
		if (fd1 >= 0)
			dup2(fd1, 1);
		execl(suid_helper(), "helper", "--helper", mode, (char *)NULL);
		_exit(98);
	}
	return pid;
}

/* Wait up to @ms for @pid to end; its wait status, or -1 if it did not. */
static int wait_ms(pid_t pid, int ms)
{
	int st, i;

	for (i = 0; i < ms; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		kt_msleep(1);
	}
	return -1;
}

static int proc_field(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], line[256];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			snprintf(out, len, "%s", line + strlen(key));
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* Is @pid's effective uid 0 (its exec of the setuid helper committed)? */
static bool euid_root(pid_t pid)
{
	unsigned int r, e;
	char v[128];

	return !proc_field(pid, "Uid:", v, sizeof(v)) && sscanf(v, "%u %u", &r, &e) == 2 && e == 0;
}

static void spin_forever(void)
{
	for (;;)
		__asm__ volatile("" ::: "memory");
}

static void exec_helper_exit(void)
{
	execl(suid_helper(), "helper", "--helper", "exit", (char *)NULL);
	_exit(97);
}

/*
 * The exec race, step by step: the attacker freezes its child, takes it
 * out with ptrace and stops it at the entry of execve() of the setuid
 * helper, pushes a hook while the child still has the attacker's creds,
 * and lets the exec go on untraced (so the setuid bit counts). The exec
 * commits root's creds: the freeze must end there and the hook must not
 * run, so the helper exits 0 on its own.
 */
static int do_exec_race(void *unused)
{
	struct user_regs_struct r;
	struct knl k;
	pid_t t;
	int st, i;

	(void)unused;
	if (knl_open(&k))
		return 1;
	t = fork();
	if (t == 0) {
		kt_child_setup();
		spin_forever();
	}
	kt_msleep(20);
	if (knl_pid_cmd(&k, CRDBG_CMD_FREEZE, t, 0))
		return 2;
	if (ptrace(PTRACE_SEIZE, t, 0, 0) || ptrace(PTRACE_INTERRUPT, t, 0, 0) ||
	    waitpid(t, &st, __WALL) != t || ptrace(PTRACE_GETREGS, t, 0, &r))
		return 3;
	r.rip = (uint64_t)(uintptr_t)exec_helper_exit;
	r.rsp = ((r.rsp - 512) & ~15ULL) - 8;
	r.orig_rax = (uint64_t)-1;
	if (ptrace(PTRACE_SETREGS, t, 0, &r))
		return 4;
	for (i = 0; i < 100; i++) {	/* to the entry of execve() */
		if (ptrace(PTRACE_SYSCALL, t, 0, 0) || waitpid(t, &st, __WALL) != t ||
		    ptrace(PTRACE_GETREGS, t, 0, &r))
			return 5;
		if (r.orig_rax == SYS_execve && (long)r.rax == -ENOSYS)
			break;
	}
	if (i == 100)
		return 6;
	if (knl_push_hook(&k, t, BAD_TRAMPOLINE, 7))	/* still the attacker's */
		return 7;
	if (ptrace(PTRACE_DETACH, t, 0, 0))
		return 8;
	st = wait_ms(t, 5000);
	if (st == -1) {
		fprintf(stderr, "# the setuid image stayed frozen (euid 0: %d)\n", euid_root(t));
		kill(t, SIGKILL);
		waitpid(t, NULL, 0);
		return 9;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "# the setuid image ended with status %#x\n", st);
		return 10;
	}
	knl_close(&k);
	return 0;
}

TEST(exec_race)
{
	ASSERT_NE(NULL, suid_helper()) TH_LOG("no setuid-root helper (CRDBG_KMOD_SUID_HELPER)");
	EXPECT_EQ(0, as_attacker(do_exec_race, NULL));
}

/* ---- a hooked thread that execs ---- */

struct hook_shared {
	volatile int fd_ok;	/* 1: the return fd is close-on-exec, -errno/-1000 if not */
};

static struct hook_shared *hook_sh;

/*
 * The hook: make the return fd stdout (dup2 drops close-on-exec) and exec
 * the setuid helper with the bytes that would return from this very hook.
 * Entered from the trampoline with the frame in r13 and the return fd in
 * r15 (both callee-saved across the call).
 */
void hook_exec_c(uint64_t arg, const struct crdbg_hook_frame *frame, int fd);
void hook_exec_c(uint64_t arg, const struct crdbg_hook_frame *frame, int fd)
{
	struct crdbg_hook_return ret = { .cookie = frame->cookie, .fd = 1 };
	char h[2 * sizeof(ret) + 1];
	int fl = fcntl(fd, F_GETFD);

	(void)arg;
	hook_sh->fd_ok = fl < 0 ? -errno : (fl & FD_CLOEXEC) ? 1 : -1000;
	if (dup2(fd, 1) != 1)
		_exit(50);
	hex(&ret, sizeof(ret), h);
	execl(suid_helper(), "helper", "--helper", "write-hex", h, (char *)NULL);
	_exit(51);
}

__asm__(".text\n"
	".globl crdbg_hook_entry\n"
	"crdbg_hook_entry:\n"
	"	movq %r13, %rsi\n"
	"	movl %r15d, %edx\n"
	"	jmp hook_exec_c\n");

static int do_hooked_thread_execs(void *unused)
{
	struct knl k;
	pid_t t;
	int st;

	(void)unused;
	if (knl_open(&k))
		return 1;
	hook_sh->fd_ok = 0;
	t = fork();
	if (t == 0) {
		kt_child_setup();
		spin_forever();
	}
	kt_msleep(20);
	if (knl_pid_cmd(&k, CRDBG_CMD_FREEZE, t, 0) ||
	    knl_push_hook(&k, t, (uint64_t)(uintptr_t)crdbg_hook_trampoline, 1) ||
	    knl_pid_cmd(&k, CRDBG_CMD_THAW, t, 0))
		return 2;
	st = wait_ms(t, 5000);
	if (st == -1) {
		kill(t, SIGKILL);
		waitpid(t, NULL, 0);
		fprintf(stderr, "# the setuid image never ended\n");
		return 3;
	}
	if (hook_sh->fd_ok != 1) {
		fprintf(stderr, "# the hook's return fd is not a close-on-exec fd: %d\n", hook_sh->fd_ok);
		return 4;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 3) {
		fprintf(stderr, "# the setuid image's write was not refused: status %#x\n", st);
		return 5;
	}
	knl_close(&k);
	return 0;
}

TEST(hooked_thread_execs)
{
	ASSERT_NE(NULL, suid_helper()) TH_LOG("no setuid-root helper (CRDBG_KMOD_SUID_HELPER)");
	hook_sh = mmap(NULL, sizeof(*hook_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hook_sh);
	EXPECT_EQ(0, as_attacker(do_hooked_thread_execs, NULL));
	munmap(hook_sh, sizeof(*hook_sh));
}

/* /dev/crdbg is 0600 and read-only: root may probe it, nobody may write. */
static int open_device(void *unused)
{
	struct stat st;
	int fd;

	(void)unused;
	if (stat(CRDBG_HOOK_DEVICE, &st))
		return 1;
	if ((st.st_mode & 07777) != 0600 || st.st_uid != 0)
		return 2;
	fd = open(CRDBG_HOOK_DEVICE, O_WRONLY);
	if (fd >= 0)
		return 3;
	if (errno != (getuid() == 0 ? EPERM : EACCES))
		return 4;
	fd = open(CRDBG_HOOK_DEVICE, O_RDONLY);	/* root's "is it loaded" probe */
	if (getuid() != 0)
		return fd < 0 && errno == EACCES ? 0 : 5;
	if (fd < 0)
		return 6;
	close(fd);
	return 0;
}

TEST(device_not_writable)
{
	EXPECT_EQ(0, open_device(NULL));
	EXPECT_EQ(0, as_attacker(open_device, NULL));
}

/* ---- a netlink socket handed to a setuid writer ---- */

static int do_socket_to_setuid(void *unused)
{
	char h[2 * sizeof(((struct knl_msg *)0)->buf) + 1];
	struct knl_msg m;
	struct knl k;
	pid_t root, w;
	int st, ret, i;

	(void)unused;
	if (knl_open(&k))
		return 1;
	root = spawn_helper("spin", -1);
	for (i = 0; i < 2000 && !euid_root(root); i++)
		kt_msleep(1);
	if (i == 2000)
		return 2;
	/* the attacker itself is refused */
	if (knl_pid_cmd(&k, CRDBG_CMD_FREEZE, root, 0) != -EPERM)
		return 3;
	knl_start(&k, &m, CRDBG_CMD_FREEZE);
	knl_u32(&m, CRDBG_A_PID, (uint32_t)root);
	hex(m.buf, m.len, h);
	w = fork();
	if (w == 0) {
		kt_child_setup();
		dup2(k.fd, 1);
		execl(suid_helper(), "helper", "--helper", "write-hex", h, (char *)NULL);
		_exit(98);
	}
	if (waitpid(w, &st, 0) != w || !WIFEXITED(st) || WEXITSTATUS(st))
		return 4;	/* the helper's write() itself worked */
	ret = knl_ack(&k, ((struct nlmsghdr *)m.buf)->nlmsg_seq, NULL);
	kill(root, SIGKILL);
	waitpid(root, NULL, 0);
	knl_close(&k);
	if (ret != -EPERM) {
		fprintf(stderr, "# FREEZE written by the setuid helper: %d (%s)\n", ret, k.msg);
		return 5;
	}
	return 0;
}

TEST(socket_to_setuid)
{
	ASSERT_NE(NULL, suid_helper()) TH_LOG("no setuid-root helper (CRDBG_KMOD_SUID_HELPER)");
	EXPECT_EQ(0, as_attacker(do_socket_to_setuid, NULL));
}

/* ---- Yama: ptrace_scope=1 ---- */

static int scope_read(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int scope_write(int v)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%d\n", v) > 0 ? 0 : -EIO;
	return fclose(f) ? -errno : ret;
}

static int do_yama_non_descendant(void *unused)
{
	struct knl k, owner;
	pid_t sibling, caller, child;
	int st;

	(void)unused;
	if (knl_open(&owner))
		return 1;
	sibling = fork();
	if (sibling == 0) {
		kt_child_setup();
		spin_forever();
	}
	/* the sibling's parent may: a persistent freeze to try hooks on */
	if (knl_pid_cmd(&owner, CRDBG_CMD_FREEZE, sibling, CRDBG_F_PERSIST))
		return 2;
	caller = fork();
	if (caller == 0) {
		kt_child_setup();
		if (knl_open(&k))
			_exit(10);
		if (knl_push_hook(&k, sibling, BAD_TRAMPOLINE, 1) != -EPERM)
			_exit(11);
		if (knl_pid_cmd(&k, CRDBG_CMD_THAW, sibling, 0) != -EPERM)
			_exit(12);
		child = fork();
		if (child == 0) {
			kt_child_setup();
			spin_forever();
		}
		if (knl_pid_cmd(&k, CRDBG_CMD_FREEZE, child, 0))	/* a descendant: yes */
			_exit(13);
		_exit(0);
	}
	if (waitpid(caller, &st, 0) != caller)
		return 3;
	if (knl_pid_cmd(&owner, CRDBG_CMD_THAW, sibling, 0))
		return 4;
	kill(sibling, SIGKILL);
	waitpid(sibling, NULL, 0);
	knl_close(&owner);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "# the non-descendant's step %d failed\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 5;
	}
	return 0;
}

TEST(yama_non_descendant)
{
	int old = scope_read();

	ASSERT_LE(0, old) TH_LOG("no Yama in this kernel");
	if (getuid() == 0) {
		ASSERT_EQ(0, scope_write(1));
	} else {
		ASSERT_LE(1, old) TH_LOG("kernel.yama.ptrace_scope is %d: run as root or set it to 1", old);
	}
	EXPECT_EQ(0, as_attacker(do_yama_non_descendant, NULL));
	if (getuid() == 0)
		EXPECT_EQ(0, scope_write(old));
}

/* ---- a zombie leader with a non-dumpable live thread ---- */

static volatile int *zl_ready;

static void *zl_thread(void *unused)
{
	(void)unused;
	prctl(PR_SET_DUMPABLE, 0);
	*zl_ready = 1;
	spin_forever();
	return NULL;
}

static int do_zombie_leader(void *unused)
{
	char state[64];
	struct knl k;
	pid_t z;
	int i, ret;

	(void)unused;
	zl_ready = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (zl_ready == MAP_FAILED || knl_open(&k))
		return 1;
	z = fork();
	if (z == 0) {
		pthread_t th;

		kt_child_setup();
		if (pthread_create(&th, NULL, zl_thread, NULL))
			_exit(90);
		while (!*zl_ready)
			kt_msleep(1);
		pthread_exit(NULL);	/* the leader becomes a zombie */
	}
	for (i = 0; i < 5000; i++) {
		if (*zl_ready && !proc_field(z, "State:", state, sizeof(state)) && strchr(state, 'Z'))
			break;
		kt_msleep(1);
	}
	if (i == 5000)
		return 2;
	ret = knl_pid_cmd(&k, CRDBG_CMD_FREEZE, z, 0);
	kill(z, SIGKILL);
	waitpid(z, NULL, 0);
	knl_close(&k);
	if (ret != -EPERM) {
		fprintf(stderr, "# FREEZE of the zombie-led process: %d (%s)\n", ret, k.msg);
		return 3;
	}
	return 0;
}

TEST(zombie_leader)
{
	EXPECT_EQ(0, as_attacker(do_zombie_leader, NULL));
}

/* ---- a cgroup-throttled thread ---- */

static char cg_dir[256];

static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* A cgroup throttled to 1 ms per second; this process may move tasks into it. */
static int cg_setup(void)
{
	const char *base = getenv("CRDBG_KMOD_CGROUP");

	if (!base || !*base) {
		if (getuid() != 0)
			return -ENOENT;
		base = "/sys/fs/cgroup";
		cg_write(base, "cgroup.subtree_control", "+cpu");
	}
	snprintf(cg_dir, sizeof(cg_dir), "%s/crdbg-throttle-%d", base, getpid());
	if (mkdir(cg_dir, 0755) && errno != EEXIST)
		return -errno;
	return cg_write(cg_dir, "cpu.max", "1000 1000000");
}

/* cpu.stat's nr_throttled of the cgroup: how often it ran out of quota. */
static long nr_throttled(void)
{
	char path[512], key[64];
	long v, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", cg_dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, "nr_throttled"))
			ret = v;
	fclose(f);
	return ret;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

struct throttle_shared {
	volatile pid_t x;		/* the attacker's throttled process */
	volatile int moved;		/* 1 once x is in the cgroup, -errno if not */
	volatile int freezing;		/* the attacker's FREEZE is about to wait */
	volatile int done;		/* the attacker is done with x */
	volatile int lifted;		/* the cgroup's limit is lifted: x can exit */
};

static struct throttle_shared *th_sh;

/*
 * Another user (OTHER_USER as root; the same uid, another process,
 * otherwise) while the attacker's FREEZE waits: FREEZE and THAW of its
 * own process, a socket close owning nothing, a socket close releasing a
 * freeze. Exit code: 0 if all of it took less than 500 ms (the attacker's
 * FREEZE waits about a second, or several, for x).
 */
static int bystander(void *unused)
{
	struct knl k, k2;
	long long t0;
	pid_t y;
	int i;

	(void)unused;
	y = fork();
	if (y == 0) {
		kt_child_setup();
		spin_forever();
	}
	for (i = 0; i < 10000 && !th_sh->freezing; i++)
		kt_msleep(1);
	kt_msleep(50);		/* the FREEZE is waiting now */
	t0 = now_ms();
	if (knl_open(&k) || knl_open(&k2))
		return 11;
	if (knl_pid_cmd(&k, CRDBG_CMD_FREEZE, y, 0) || knl_pid_cmd(&k, CRDBG_CMD_THAW, y, 0))
		return 12;
	knl_close(&k2);
	if (knl_pid_cmd(&k, CRDBG_CMD_FREEZE, y, 0))
		return 13;
	knl_close(&k);
	t0 = now_ms() - t0;
	kill(y, SIGKILL);
	waitpid(y, NULL, 0);
	fprintf(stderr, "# the bystander's requests took %lld ms\n", t0);
	if (t0 >= 500)
		return 14;
	return 0;
}

static int do_throttled_freeze(void *unused)
{
	long long t0, took;
	struct knl k;
	pid_t x;
	int i, ret;

	(void)unused;
	if (knl_open(&k))
		return 1;
	x = fork();
	if (x == 0) {
		kt_child_setup();
		spin_forever();
	}
	th_sh->x = x;
	fprintf(stderr, "# throttled process %d\n", x);
	for (i = 0; i < 5000 && !th_sh->moved; i++)
		kt_msleep(1);
	if (th_sh->moved != 1)
		return 2;
	/*
	 * Once x has run out of quota it waits for the next period (and, as
	 * bandwidth is handed out in slices larger than its quota, usually for
	 * several): runnable, on no CPU, unable to park meanwhile.
	 */
	for (i = 0; i < 10000 && nr_throttled() < 1; i++)
		kt_msleep(1);
	if (i == 10000)
		return 3;
	kt_msleep(20);
	th_sh->freezing = 1;
	t0 = now_ms();
	ret = knl_pid_cmd(&k, CRDBG_CMD_FREEZE, x, 0);
	took = now_ms() - t0;
	fprintf(stderr, "# FREEZE of the throttled process: %d after %lld ms\n", ret, took);
	kt_msleep(500);		/* the bystander is done */
	knl_close(&k);
	th_sh->done = 1;	/* a throttled x may owe the cgroup seconds of CPU */
	for (i = 0; i < 10000 && !th_sh->lifted; i++)
		kt_msleep(1);
	kill(x, SIGKILL);
	waitpid(x, NULL, 0);
	if (ret || took > 2500) {
		fprintf(stderr, "# FREEZE of the throttled thread: %d after %lld ms\n", ret, took);
		return 5;
	}
	return 0;
}

FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(slow)
{
}

TEST_F_TIMEOUT(slow, throttled_freeze, 120)
{
	pid_t att, by;
	char pid[16];
	int i;

	ASSERT_EQ(0, cg_setup()) TH_LOG("no writable cgroup with cpu.max (CRDBG_KMOD_CGROUP): %s",
					strerror(errno));
	th_sh = mmap(NULL, sizeof(*th_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, th_sh);
	by = start_as(OTHER_USER, bystander, NULL);
	att = start_as(ATTACKER, do_throttled_freeze, NULL);
	for (i = 0; i < 5000 && !th_sh->x; i++)
		kt_msleep(1);
	snprintf(pid, sizeof(pid), "%d", th_sh->x);
	th_sh->moved = th_sh->x ? cg_write(cg_dir, "cgroup.procs", pid) : -ESRCH;
	if (!th_sh->moved)
		th_sh->moved = 1;
	for (i = 0; i < 30000 && !th_sh->done && th_sh->moved == 1; i++)
		kt_msleep(1);
	EXPECT_EQ(0, cg_write(cg_dir, "cpu.max", "max 1000000"));
	th_sh->lifted = 1;
	EXPECT_EQ(0, reap(att));
	EXPECT_EQ(0, reap(by));
	rmdir(cg_dir);
	munmap(th_sh, sizeof(*th_sh));
}

/* ---- concurrent fuzz ---- */

#define FUZZERS		4
#define FUZZ_MSGS	25000	/* per fuzzer: 100,000 in all */
#define POOL		8

struct fuzz_shared {
	volatile pid_t pool[POOL];
	volatile int stop;
	volatile long sent[FUZZERS];
};

/*
 * Where the fuzzers' hooks land: in a target forked from this program,
 * a quiet end (an unmapped address would fill the kernel log with
 * segfault lines); an exec'd target's image has it elsewhere.
 */
static void fuzz_hook_land(void)
{
	_exit(0);
}

static uint32_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)*s;
}

/* A target: threads that come and go, then an exec or an exit. */
static void fuzz_target(uint64_t seed)
{
	int i, n = 1 + (int)(xorshift(&seed) % 4);
	pthread_t th;

	for (i = 0; i < n; i++)
		pthread_create(&th, NULL, (void *(*)(void *))spin_forever, NULL);
	kt_msleep(5 + (int)(xorshift(&seed) % 40));
	if (xorshift(&seed) % 3 == 0)
		execl("/proc/self/exe", "target", "--helper", "exit", (char *)NULL);
	_exit(0);
}

/*
 * The pool's bookkeeping is the churn's own memory (kids); sh->pool only
 * publishes it to the fuzzers, and only the churn writes it: a forked
 * target never touches shared memory. A target is reaped through its
 * slot alone, after its pid is unpublished, so a published pid is always
 * one of the churn's own children (live or a zombie), never a recycled
 * one, and every child is killed and reaped at the end, even one a
 * persistent freeze holds.
 */
static void fuzz_churn(struct fuzz_shared *sh)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	pid_t kids[POOL] = { 0 }, pid;
	siginfo_t si;
	int slot;

	while (!sh->stop) {
		kt_msleep(1);
		slot = (int)(xorshift(&seed) % POOL);
		if (kids[slot] > 0) {
			si.si_pid = 0;
			if (waitid(P_PID, kids[slot], &si, WEXITED | WNOHANG | WNOWAIT) || !si.si_pid)
				continue;	/* still running (or frozen) */
			sh->pool[slot] = 0;
			waitpid(kids[slot], NULL, 0);
			kids[slot] = 0;
		}
		pid = fork();
		if (pid == 0) {
			kt_child_setup();
			fuzz_target(seed);
		}
		if (pid > 0)
			sh->pool[slot] = kids[slot] = pid;
	}
	for (slot = 0; slot < POOL; slot++) {
		if (kids[slot] <= 0)
			continue;
		sh->pool[slot] = 0;
		kill(kids[slot], SIGKILL);
		waitpid(kids[slot], NULL, 0);
	}
	_exit(0);
}

static void fuzz_one(struct fuzz_shared *sh, int idx)
{
	uint64_t seed = 0x1234567ULL * (idx + 1);
	struct knl_msg m;
	struct knl k;
	long n;

	if (knl_open(&k))
		_exit(1);
	for (n = 0; n < FUZZ_MSGS; n++) {
		uint32_t r = xorshift(&seed);
		pid_t pid = sh->pool[r % POOL];	/* 0: a slot being refilled */
		static const uint8_t cmds[] = {
			CRDBG_CMD_FREEZE, CRDBG_CMD_THAW, CRDBG_CMD_QUERY, CRDBG_CMD_PUSH_HOOK,
			CRDBG_CMD_GET_STATUS, CRDBG_CMD_FREEZE, CRDBG_CMD_THAW, 0, 200,
		};
		uint8_t cmd = cmds[(r >> 4) % sizeof(cmds)];

		knl_start(&k, &m, cmd);
		if ((r >> 8) % 8)
			knl_u32(&m, CRDBG_A_PID, pid > 0 && (r >> 12) % 16 ? (uint32_t)pid :
				4194304 + r % 4096);
		if (cmd == CRDBG_CMD_FREEZE && (r >> 16) % 4 == 0)
			knl_u32(&m, CRDBG_A_FLAGS, (r >> 18) % 2 ? CRDBG_F_PERSIST : r);
		if (cmd == CRDBG_CMD_PUSH_HOOK) {
			knl_u64(&m, CRDBG_A_TRAMPOLINE, (r >> 6) % 16 ?
				(uint64_t)(uintptr_t)fuzz_hook_land : BAD_TRAMPOLINE);
			knl_u64(&m, CRDBG_A_HOOK_ARG, r);
		}
		if ((r >> 20) % 16 == 0)
			knl_u32(&m, CRDBG_A_PROC_MEM_FD, (r >> 24) % 8);
		if ((r >> 24) % 32 == 0)
			knl_u32(&m, (uint16_t)((r >> 8) % (CRDBG_A_MAX + 3)), r);
		if ((r >> 27) % 16 == 0)
			((struct nlmsghdr *)m.buf)->nlmsg_flags |= NLM_F_DUMP;
		if (knl_xact(&k, &m) == -ETIMEDOUT)
			_exit(2);
		sh->sent[idx] = n + 1;
		if ((r >> 28) == 0) {	/* drop the socket and its freezes now and then */
			knl_close(&k);
			if (knl_open(&k))
				_exit(3);
		}
	}
	knl_close(&k);
	_exit(0);
}

static int tainted(void)
{
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}


TEST_F_TIMEOUT(slow, concurrent_fuzz, 600)
{
	struct fuzz_shared *sh;
	pid_t churn, fz[FUZZERS];
	int i, st, taint = tainted();
	long long t0 = now_ms();
	long total = 0;
	FILE *pow = getuid() == 0 ? fopen("/proc/sys/kernel/panic_on_warn", "w") : NULL;

	if (pow) {	/* a WARN now panics the guest, which the runner counts as a failure */
		fputs("1\n", pow);
		fclose(pow);
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset((void *)sh, 0, sizeof(*sh));
	churn = fork();
	if (churn == 0) {
		kt_child_setup();
		fuzz_churn(sh);
	}
	kt_msleep(50);
	for (i = 0; i < FUZZERS; i++) {
		fz[i] = fork();
		if (fz[i] == 0) {
			kt_child_setup();
			fuzz_one(sh, i);
		}
	}
	for (i = 0; i < FUZZERS; i++) {
		ASSERT_EQ(fz[i], waitpid(fz[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("fuzzer %d: status %#x", i, st);
		total += sh->sent[i];
	}
	sh->stop = 1;
	ASSERT_EQ(churn, waitpid(churn, &st, 0));
	EXPECT_LE(FUZZERS * FUZZ_MSGS, total);
	EXPECT_EQ(taint, tainted());
	TH_LOG("%ld messages in %lld ms", total, now_ms() - t0);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN
