/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place userspace talks generic netlink to crdbg.ko, over
 * libnl-genl-3: connect and resolve the family, send a request and
 * collect the reply, with the kernel's extended-ack message turned into
 * a one-line error (as iproute2 and iw print it). Every reply attribute
 * is checked against the type <linux/crdbg.h> gives it before a caller
 * sees it.
 */
#ifndef CRDBG_NL_H
#define CRDBG_NL_H

#include <stddef.h>
#include <stdint.h>

#include <netlink/genl/genl.h>

#include <linux/crdbg.h>

struct crdbg_nl {
	struct nl_sock *sk;
	int family;		/* the "crdbg" family's id */
};

/*
 * Connect and resolve the "crdbg" family (which loads the module when it
 * is installed): 0, -ENOENT when crdbg.ko cannot be had, -ENOTCONN when
 * there is no generic netlink; err_msg gets a one-line reason.
 */
int crdbg_nl_open(struct crdbg_nl *nl, char *err_msg, size_t err_len);
/* Accepts a handle that was never opened, or closed already. */
void crdbg_nl_close(struct crdbg_nl *nl);

/* Receive the module's events (CRDBG_CMD_EVENT) on nl's socket too. */
int crdbg_nl_subscribe_events(struct crdbg_nl *nl, char *err_msg, size_t err_len);

/* The socket's descriptor, for poll() and recv() of events. */
int crdbg_nl_fd(const struct crdbg_nl *nl);

/* A request for cmd to the crdbg family (flags: NLM_F_DUMP or 0); NULL: out of memory. */
struct nl_msg *crdbg_nl_request(const struct crdbg_nl *nl, uint8_t cmd, int flags);

/*
 * Send msg (taking it: it is freed whatever happens; NULL, as a failed
 * crdbg_nl_request() or put gives, fails with -ENOMEM) with an ack asked
 * for, and run parse(attrs, arg) on every reply message; attrs is
 * indexed by attribute type up to CRDBG_A_MAX, each one checked.
 * Returns 0, parse's negative return, or the kernel's negative errno
 * with its extack text (or strerror) in err_msg.
 */
typedef int (*crdbg_nl_parse_fn)(struct nlattr **attrs, void *arg);
int crdbg_nl_transact(struct crdbg_nl *nl, struct nl_msg *msg, crdbg_nl_parse_fn parse,
		      void *arg, char *err_msg, size_t err_len);

/*
 * A crdbg family message (a reply or an event) h, of which len bytes
 * were received, into attrs[0..CRDBG_A_MAX]: 0, or -EPROTO when it is
 * not a whole message whose attributes fill it and have their types.
 */
int crdbg_nl_parse_message(struct nlmsghdr *h, size_t len, struct nlattr *attrs[CRDBG_A_MAX + 1]);

/*
 * The text of an extended ack's NLMSGERR_ATTR_MSG in an NLMSG_ERROR
 * message h (len bytes received from it on), or NULL.
 */
const char *crdbg_nl_extack_text(const struct nlmsghdr *h, size_t len);

#endif /* CRDBG_NL_H */
