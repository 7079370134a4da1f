/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place userspace talks generic netlink to crdbg.ko: connect,
 * resolve the family, send a request and collect the reply with the
 * kernel's extended-ack message turned into a one-line error.
 */
#ifndef CRDBG_GENL_H
#define CRDBG_GENL_H

#include <stddef.h>
#include <netlink/genl/genl.h>

struct crdbg_genl {
	struct nl_sock *sock;
	int family;
};

/*
 * Connect and resolve the "crdbg" family. -ENOENT means the module is not
 * loaded. err_msg gets a one-line reason on failure.
 */
int crdbg_genl_open(struct crdbg_genl *g, char *err_msg, size_t err_len);
void crdbg_genl_close(struct crdbg_genl *g);

/* A new request message for cmd with the family header filled in. */
struct nl_msg *crdbg_genl_msg(const struct crdbg_genl *g, int cmd, int flags);

/*
 * Send msg (consumed) and run parse(attrs, arg) on every reply message;
 * attrs is indexed by attribute type up to CRDBG_A_MAX. Returns 0, or the
 * kernel's negative errno with its extack text (or strerror) in err_msg.
 */
typedef int (*crdbg_genl_parse_fn)(struct nlattr **attrs, void *arg);
int crdbg_genl_transact(struct crdbg_genl *g, struct nl_msg *msg, crdbg_genl_parse_fn parse,
			void *arg, char *err_msg, size_t err_len);

#endif /* CRDBG_GENL_H */
