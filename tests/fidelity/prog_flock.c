// SPDX-License-Identifier: GPL-2.0
/*
 * File locks: flock(LOCK_EX) on DIR/flock, a POSIX write lock on bytes
 * 10-19 of DIR/posix, an OFD read lock on DIR/ofd. After the word a
 * child (a new process, so the locks conflict with it) finds each held
 * as it was, by us, and nothing more.
 */
#include <sys/file.h>
#include <sys/wait.h>

#include "fidelity.h"

static int open_file(const char *name)
{
	int fd = open(fid_path(name), O_RDWR | O_CREAT, 0644);

	if (fd < 0 || ftruncate(fd, 100))
		fid_die("%s: %s", name, strerror(errno));
	return fd;
}

/* In the child: what conflicts, and who holds it. Exit status = failures. */
static int probe(pid_t parent)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };
	int bad = 0, f1, f2, f3;

	f1 = open(fid_path("flock"), O_RDWR);
	f2 = open(fid_path("posix"), O_RDWR);
	f3 = open(fid_path("ofd"), O_RDWR);
	if (flock(f1, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
		bad |= 1;
	if (fcntl(f2, F_GETLK, &fl) || fl.l_type != F_WRLCK || fl.l_start != 10 || fl.l_len != 10 ||
	    fl.l_pid != parent)
		bad |= 2;
	fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	if (fcntl(f2, F_SETLK, &fl))
		bad |= 4;	/* bytes 0-9 were free */
	fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	if (fcntl(f3, F_OFD_GETLK, &fl) || fl.l_type != F_RDLCK || fl.l_pid != -1)
		bad |= 8;
	fl = (struct flock){ .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	if (fcntl(f3, F_OFD_SETLK, &fl))
		bad |= 16;	/* readers share */
	return bad;
}

int main(int argc, char **argv)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 10 };
	int f1, f2, f3, st;
	pid_t kid;

	fid_init(argc, argv);
	f1 = open_file("flock");
	f2 = open_file("posix");
	f3 = open_file("ofd");
	if (flock(f1, LOCK_EX) || fcntl(f2, F_SETLK, &fl))
		fid_die("lock: %s", strerror(errno));
	fl = (struct flock){ .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	if (fcntl(f3, F_OFD_SETLK, &fl))
		fid_die("OFD lock: %s", strerror(errno));
	fid_ready_wait();

	kid = fork();
	if (kid == 0)
		_exit(probe(getppid()));
	if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st))
		fid_fail("the probing child died");
	else {
		st = WEXITSTATUS(st);
		FID_CHECK(!(st & 1), "flock: not held");
		FID_CHECK(!(st & 2), "POSIX lock: not held on 10-19 by us");
		FID_CHECK(!(st & 4), "POSIX lock: bytes 0-9 were locked too");
		FID_CHECK(!(st & 8), "OFD read lock: not held");
		FID_CHECK(!(st & 16), "OFD read lock: became exclusive");
	}
	fid_finish();
}
