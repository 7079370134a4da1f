/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event engine of an SDM process: one epoll per process, shared by the
 * transport, I/O forwarding and a server's backend. Descriptors and
 * one-shot timers are added to the engine that a struct sdm_transport
 * carries (the one a backend gets in sdm_backend_host.engine).
 */
#ifndef SDM_ENGINE_H
#define SDM_ENGINE_H

#include <stdint.h>

struct sdm_transport;

typedef void (*sdm_fd_cb)(void *arg, int fd, uint32_t events);
typedef void (*sdm_timer_cb)(void *arg);

/* events are EPOLLIN/EPOLLOUT bits; cb runs from the engine's loop. */
int sdm_transport_watch_fd(struct sdm_transport *t, int fd, uint32_t events,
			   sdm_fd_cb cb, void *arg);
int sdm_transport_unwatch_fd(struct sdm_transport *t, int fd);
/* One-shot timer after ms; returns a timer id > 0. */
int sdm_transport_add_timer(struct sdm_transport *t, int ms, sdm_timer_cb cb,
			    void *arg);
void sdm_transport_cancel_timer(struct sdm_transport *t, int id);

/* Monotonic milliseconds. */
uint64_t sdm_now_ms(void);

#endif /* SDM_ENGINE_H */
