// SPDX-License-Identifier: GPL-2.0
/*
 * epoll: a pipe with data (level-triggered), an empty eventfd, and a
 * second pipe registered EPOLLONESHOT that has fired already, each with
 * its own cookie. After the word only the first is ready; the eventfd
 * becomes ready when written; the one-shot stays disarmed.
 */
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "fidelity.h"

int main(int argc, char **argv)
{
	struct epoll_event ev, out[4];
	int ep, p[2], q[2], efd, n;
	uint64_t one = 1;

	fid_init(argc, argv);
	ep = epoll_create1(EPOLL_CLOEXEC);
	efd = eventfd(0, EFD_NONBLOCK);
	if (ep < 0 || efd < 0 || pipe(p) || pipe(q))
		fid_die("set-up: %s", strerror(errno));
	ev.events = EPOLLIN;
	ev.data.u64 = 0x1111;
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	ev.data.u64 = 0x2222;
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 0x3333;
	epoll_ctl(ep, EPOLL_CTL_ADD, q[0], &ev);
	if (write(q[1], "x", 1) != 1 || epoll_wait(ep, out, 4, 0) != 1 || out[0].data.u64 != 0x3333)
		fid_die("one-shot did not fire");
	if (write(p[1], "data", 4) != 4)
		fid_die("write");
	fid_ready_wait();

	n = epoll_wait(ep, out, 4, 0);
	FID_CHECK(n == 1 && out[0].data.u64 == 0x1111 && (out[0].events & EPOLLIN),
		  "ready set: %d events, first cookie %#llx", n, (unsigned long long)out[0].data.u64);
	FID_CHECK(write(efd, &one, 8) == 8, "eventfd write");
	n = epoll_wait(ep, out, 4, 1000);
	FID_CHECK(n == 2, "after the eventfd write: %d events, want 2", n);
	FID_CHECK(n < 1 || out[0].data.u64 + out[1].data.u64 == 0x3333,
		  "cookies %#llx %#llx", (unsigned long long)out[0].data.u64,
		  (unsigned long long)out[1].data.u64);
	FID_CHECK(fcntl(ep, F_GETFD) & FD_CLOEXEC, "close-on-exec lost");
	fid_finish();
}
