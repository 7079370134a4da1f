/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place userspace talks generic netlink to crdbg.ko: connect,
 * resolve the family, send a request and collect the reply with the
 * kernel's extended-ack message turned into a one-line error. Replies
 * are decoded with crdbg/nla.h, every attribute checked against the
 * type <linux/crdbg.h> gives it before a caller sees it.
 */
#ifndef CRDBG_GENL_H
#define CRDBG_GENL_H

#include <stddef.h>
#include <stdint.h>

#include <linux/crdbg.h>

#include <crdbg/nla.h>

struct crdbg_genl {
	int fd;
	uint16_t family;
	uint32_t events_group;	/* CRDBG_MCGRP_EVENTS' id, 0 if none */
	uint32_t seq;
};

/*
 * Connect and resolve the "crdbg" family (which loads the module when it
 * is installed). -ENOENT means crdbg.ko cannot be had. err_msg gets a
 * one-line reason on failure.
 */
int crdbg_genl_open(struct crdbg_genl *g, char *err_msg, size_t err_len);
void crdbg_genl_close(struct crdbg_genl *g);

/* Receive the module's events (CRDBG_CMD_EVENT) on g's socket too. */
int crdbg_genl_subscribe_events(struct crdbg_genl *g, char *err_msg, size_t err_len);

/* Start a request for cmd (NLM_F_REQUEST | flags) to the crdbg family. */
void crdbg_genl_request(struct crdbg_nla_request *r, const struct crdbg_genl *g, uint8_t cmd,
			uint16_t flags);

/*
 * Send r with an ack asked for and run parse(attrs, arg) on every reply
 * message; attrs is indexed by attribute type up to CRDBG_A_MAX, each
 * one checked. Returns 0, parse's negative return, or the kernel's
 * negative errno with its extack text (or strerror) in err_msg.
 */
typedef int (*crdbg_genl_parse_fn)(const struct nlattr *const *attrs, void *arg);
int crdbg_genl_transact(struct crdbg_genl *g, struct crdbg_nla_request *r,
			crdbg_genl_parse_fn parse, void *arg, char *err_msg, size_t err_len);

/*
 * A crdbg family message (a reply or an event) of len bytes at h into
 * attrs[0..CRDBG_A_MAX]: 0, or -EPROTO when it is not a whole message
 * whose attributes have their types.
 */
int crdbg_genl_parse_message(const struct nlmsghdr *h, size_t len,
			     const struct nlattr *attrs[CRDBG_A_MAX + 1]);

#endif /* CRDBG_GENL_H */
