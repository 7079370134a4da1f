// SPDX-License-Identifier: GPL-2.0
/*
 * A client of crdbgd that lies (tests/crs/test_service.sh): it asks for a
 * checkpoint of PID with a proof that is not PID's.
 *
 *   prog_forge SOCKET PID self|pidfd
 *
 * self: a pidfd and /proc/self/mem of its own process; pidfd: a pidfd of
 * PID (pidfd_open asks no permission) and its own /proc/self/mem. Prints
 * the service's error line and exits 0 if the service refused, 1 if it
 * did not, 2 if it could not ask.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <crdbg/crdbgd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct crdbgd_msg m = { .kind = CRDBGD_OP_CHECKPOINT };
	union {
		char b[CMSG_SPACE(5 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	uint8_t buf[CRDBGD_MSG_MAX];
	struct iovec iov = { buf, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			     .msg_controllen = sizeof(ctl.b) };
	struct cmsghdr *c;
	int fds[5] = { 0, 1, 2 }, s, n;
	pid_t pid;

	if (argc != 4)
		return 2;
	pid = (pid_t)atoi(argv[2]);
	fds[3] = (int)syscall(SYS_pidfd_open, strcmp(argv[3], "self") ? pid : getpid(), 0);
	fds[4] = open("/proc/self/mem", O_RDONLY);
	if (fds[3] < 0 || fds[4] < 0)
		return 2;
	crdbgd_set_u32(&m, CRDBGD_A_PID, (uint32_t)pid);
	n = crdbgd_format(&m, buf, sizeof(buf));
	if (n < 0)
		return 2;
	iov.iov_len = (size_t)n;
	memset(ctl.b, 0, sizeof(ctl.b));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) || sendmsg(s, &mh, 0) != n)
		return 2;
	n = (int)recv(s, buf, sizeof(buf), 0);
	if (n <= 0 || crdbgd_parse(buf, (size_t)n, &m) || m.kind != CRDBGD_R_DONE)
		return 2;
	printf("%s\n", m.rc ? m.error : "accepted");
	return m.rc ? 0 : 1;
}
