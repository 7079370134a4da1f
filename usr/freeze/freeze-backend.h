/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal contract between the dispatcher (freeze.c) and the two backends
 * (freeze-kmod.c, freeze-ptrace.c). A backend embeds struct freeze_backend
 * as its first member, fills ops, and recovers its own state with
 * container_of(). Every op has the semantics documented for the public
 * call of the same name in <crdbg/freeze.h>; the dispatcher has already
 * checked that pid > 0 and that err_msg is a valid buffer (it substitutes
 * a scratch one when the caller passed NULL), so backends may always
 * snprintf() into err_msg.
 */
#ifndef CRDBG_FREEZE_BACKEND_H
#define CRDBG_FREEZE_BACKEND_H

#include <stddef.h>

#include <crdbg/freeze.h>

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct freeze_backend_ops {
	const char *name;	/* "kmod" or "ptrace" */
	void (*close)(struct freeze_backend *b);	/* frees b itself too */
	int (*freeze)(struct freeze_backend *b, pid_t pid, unsigned int flags,
		      char *err_msg, size_t err_len);
	int (*thaw)(struct freeze_backend *b, pid_t pid, char *err_msg, size_t err_len);
	int (*query)(struct freeze_backend *b, pid_t pid, struct freeze_thread *threads,
		     size_t max, char *err_msg, size_t err_len);
	int (*push_hook)(struct freeze_backend *b, pid_t pid, pid_t tid, uint64_t trampoline,
			 uint64_t arg, char *err_msg, size_t err_len);
	/* optional: NULL when the backend never ends a group stop */
	int (*requeue_sigcont)(struct freeze_backend *b, pid_t pid, bool shared,
			       const pid_t *tids, size_t nr, char *err_msg, size_t err_len);
};

struct freeze_backend {
	const struct freeze_backend_ops *ops;
	enum freeze_backend_kind kind;
};

/*
 * Backend constructors. freeze_kmod_open() returns -ENOENT when the
 * "crdbg" generic netlink family does not resolve (module not loaded);
 * the dispatcher uses that to fall back to ptrace in AUTO mode.
 */
int freeze_kmod_open(struct freeze_backend **ret, char *err_msg, size_t err_len);

/*
 * The kmod backend's decoder of a QUERY reply (a crdbg_nl_parse_fn over
 * struct freeze_kmod_query; fuzzed on its own): up to max threads, n
 * counting them all; 0, or -EPROTO for a thread list that is not one.
 */
struct nlattr;
struct freeze_kmod_query {
	struct freeze_thread *threads;
	size_t max;
	size_t n;
};
int freeze_kmod_parse_query(struct nlattr **attrs, void *arg);
int freeze_ptrace_open(struct freeze_backend **ret, char *err_msg, size_t err_len);

#endif /* CRDBG_FREEZE_BACKEND_H */
