/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client's call to its node's service (<crdbg/crdbgd.h>): the CLI of a
 * user who is not root, and crdbg-part run for one. One call is one
 * request and its replies on a connection of its own.
 */
#ifndef CRDBG_CRDBGD_CLIENT_H
#define CRDBG_CRDBGD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <crdbg/crdbgd.h>

struct crdbgd_call {
	struct crdbgd_msg req;
	int fds[CRDBGD_MAX_FDS];
	size_t nr_fds;
	int sock;
};

/* Whether checkpoints go through the service: this process is not root. */
bool crdbgd_wanted(void);

/*
 * A request of kind op with our stdio, and the store the user named
 * (store, else $CRDBG_STORE; NULL and unset: the node's) opened by us.
 * 0, or an errno with the one line in err.
 */
int crdbgd_call_init(struct crdbgd_call *c, enum crdbgd_op op, const char *store, char *err,
		     size_t errlen);

/*
 * The proof of access to pid (a pidfd and /proc/PID/mem, opened under
 * our own credentials), after the store's fd: 0, or an errno and err.
 */
int crdbgd_call_prove(struct crdbgd_call *c, pid_t pid, char *err, size_t errlen);

/* One more fd (dup'ed), after those before: 0 or an errno. */
int crdbgd_call_add_fd(struct crdbgd_call *c, int fd);

/*
 * Send the request, and take replies until DONE: each ENTRY to fn (may
 * be NULL), DONE into *done. The call is closed either way. 0, or an
 * errno with the one line in err (the service's own, or why it could not
 * be asked).
 */
int crdbgd_call_run(struct crdbgd_call *c, void (*fn)(const struct crdbgd_msg *, void *),
		    void *arg, struct crdbgd_msg *done, char *err, size_t errlen);

void crdbgd_call_close(struct crdbgd_call *c);

#endif /* CRDBG_CRDBGD_CLIENT_H */
