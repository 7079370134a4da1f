// SPDX-License-Identifier: GPL-2.0
/*
 * The transport front door and the process's single progress engine: one
 * epoll set for every descriptor (sockets, ptys, backend pipes) plus a
 * small list of one-shot timers. Implementations register their sockets
 * here through sdm_transport_watch_fd.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

struct sdm_watch {
	sdm_fd_cb cb;
	void *arg;
};

struct sdm_timer {
	int id;
	uint64_t deadline;
	sdm_timer_cb cb;
	void *arg;
};

struct sdm_engine {
	int epfd;
	struct sdm_watch *watch;	/* indexed by fd */
	int nwatch;
	struct sdm_timer *timers;
	int ntimers, cap_timers, next_timer_id;
};

uint64_t sdm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct sdm_transport *sdm_transport_new(const struct sdm_transport_ops *ops,
					const struct sdm_transport_config *cfg)
{
	struct sdm_transport *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->engine = calloc(1, sizeof(*t->engine));
	if (!t->engine)
		goto err_free;
	t->engine->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->engine->epfd < 0)
		goto err_engine;
	t->ops = ops ? ops : &sdm_transport_tcp_ops;
	t->cfg = *cfg;
	if (t->ops->init && t->ops->init(t) < 0)
		goto err_epoll;
	return t;

err_epoll:
	close(t->engine->epfd);
err_engine:
	free(t->engine);
err_free:
	free(t);
	return NULL;
}

void sdm_transport_free(struct sdm_transport *t)
{
	if (!t)
		return;
	if (t->ops->finalize)
		t->ops->finalize(t);
	close(t->engine->epfd);
	free(t->engine->watch);
	free(t->engine->timers);
	free(t->engine);
	free(t);
}

int sdm_transport_listen(struct sdm_transport *t, const char *host, int port,
			 int span, int *ret_port)
{
	return t->ops->listen(t, host, port, span, ret_port);
}

int sdm_transport_connect(struct sdm_transport *t, const char *host, int port,
			  int expect_id)
{
	return t->ops->connect(t, host, port, expect_id);
}

int sdm_transport_send(struct sdm_transport *t, int peer, const void *buf,
		       size_t len)
{
	return t->ops->send(t, peer, buf, len);
}

void sdm_transport_close_peer(struct sdm_transport *t, int peer)
{
	t->ops->close_peer(t, peer);
}

const struct sdm_transport_stats *sdm_transport_stats(struct sdm_transport *t)
{
	return &t->stats;
}

int sdm_transport_watch_fd(struct sdm_transport *t, int fd, uint32_t events,
			   sdm_fd_cb cb, void *arg)
{
	struct sdm_engine *e = t->engine;
	struct epoll_event ev = { .events = events, .data.fd = fd };
	int op = EPOLL_CTL_ADD;

	if (fd < 0)
		return -EBADF;
	if (fd >= e->nwatch) {
		int n = fd + 64;
		struct sdm_watch *w = realloc(e->watch, n * sizeof(*w));

		if (!w)
			return -ENOMEM;
		memset(w + e->nwatch, 0, (n - e->nwatch) * sizeof(*w));
		e->watch = w;
		e->nwatch = n;
	}
	if (e->watch[fd].cb)
		op = EPOLL_CTL_MOD;
	if (epoll_ctl(e->epfd, op, fd, &ev) < 0)
		return -errno;
	e->watch[fd].cb = cb;
	e->watch[fd].arg = arg;
	return 0;
}

int sdm_transport_unwatch_fd(struct sdm_transport *t, int fd)
{
	struct sdm_engine *e = t->engine;

	if (fd < 0 || fd >= e->nwatch || !e->watch[fd].cb)
		return -ENOENT;
	e->watch[fd].cb = NULL;
	e->watch[fd].arg = NULL;
	/* Fails harmlessly if the caller already closed fd. */
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, fd, NULL);
	return 0;
}

int sdm_transport_add_timer(struct sdm_transport *t, int ms, sdm_timer_cb cb,
			    void *arg)
{
	struct sdm_engine *e = t->engine;
	struct sdm_timer *tm;

	if (e->ntimers == e->cap_timers) {
		int n = e->cap_timers ? e->cap_timers * 2 : 16;

		tm = realloc(e->timers, n * sizeof(*tm));
		if (!tm)
			return -ENOMEM;
		e->timers = tm;
		e->cap_timers = n;
	}
	tm = &e->timers[e->ntimers++];
	tm->id = ++e->next_timer_id;
	if (tm->id <= 0)
		tm->id = e->next_timer_id = 1;
	tm->deadline = sdm_now_ms() + (ms > 0 ? ms : 0);
	tm->cb = cb;
	tm->arg = arg;
	return tm->id;
}

void sdm_transport_cancel_timer(struct sdm_transport *t, int id)
{
	struct sdm_engine *e = t->engine;

	for (int i = 0; i < e->ntimers; i++) {
		if (e->timers[i].id == id) {
			e->timers[i] = e->timers[--e->ntimers];
			return;
		}
	}
}

/* Run expired timers; return ms until the next one or -1. */
static int run_timers(struct sdm_engine *e)
{
	uint64_t now = sdm_now_ms();
	uint64_t next = UINT64_MAX;
	int i = 0;

	while (i < e->ntimers) {
		struct sdm_timer tm = e->timers[i];

		if (tm.deadline <= now) {
			e->timers[i] = e->timers[--e->ntimers];
			tm.cb(tm.arg);	/* may add or cancel timers */
			i = 0;
			now = sdm_now_ms();
			next = UINT64_MAX;
			continue;
		}
		if (tm.deadline < next)
			next = tm.deadline;
		i++;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)(next - now);
}

int sdm_transport_poll_fd(struct sdm_transport *t)
{
	return t->engine->epfd;
}

int sdm_transport_progress(struct sdm_transport *t, int timeout_ms)
{
	struct sdm_engine *e = t->engine;
	struct epoll_event ev[64];
	int n, wait;

	if (t->ops->progress)
		t->ops->progress(t);
	wait = run_timers(e);
	if (wait < 0 || (timeout_ms >= 0 && timeout_ms < wait))
		wait = timeout_ms;
	n = epoll_wait(e->epfd, ev, 64, wait);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		int fd = ev[i].data.fd;

		if (fd < e->nwatch && e->watch[fd].cb)
			e->watch[fd].cb(e->watch[fd].arg, fd, ev[i].events);
	}
	run_timers(e);
	return n;
}
