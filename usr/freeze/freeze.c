// SPDX-License-Identifier: GPL-2.0
/*
 * Backend dispatcher for <crdbg/freeze.h>: picks kmod or ptrace and
 * forwards every call. AUTO means kmod when the "crdbg" generic netlink
 * family resolves, else ptrace; the CRDBG_BACKEND environment variable
 * (kmod|ptrace|auto) overrides AUTO. An explicit kmod request with the
 * module absent is an error, never a silent fallback.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freeze-backend.h"

#define SCRATCH_LEN 256

enum freeze_backend_kind freeze_backend_kind_from_string(const char *s)
{
	if (!s)
		return (enum freeze_backend_kind)-1;
	if (!strcmp(s, "auto"))
		return FREEZE_BACKEND_AUTO;
	if (!strcmp(s, "kmod"))
		return FREEZE_BACKEND_KMOD;
	if (!strcmp(s, "ptrace"))
		return FREEZE_BACKEND_PTRACE;
	return (enum freeze_backend_kind)-1;
}

static int open_kmod(struct freeze_backend **ret, char *err_msg, size_t err_len)
{
	return freeze_kmod_open(ret, err_msg, err_len);
}

int freeze_backend_open(enum freeze_backend_kind kind, struct freeze_backend **ret,
			char *err_msg, size_t err_len)
{
	char scratch[SCRATCH_LEN];
	struct freeze_backend *b = NULL;
	const char *env;
	int err;

	if (!err_msg || !err_len) {
		err_msg = scratch;
		err_len = sizeof(scratch);
	}
	err_msg[0] = '\0';
	if (!ret)
		return -EINVAL;

	if (kind == FREEZE_BACKEND_AUTO) {
		env = getenv("CRDBG_BACKEND");
		if (env && *env) {
			kind = freeze_backend_kind_from_string(env);
			if ((int)kind == -1) {
				snprintf(err_msg, err_len,
					 "CRDBG_BACKEND=%s is not one of kmod, ptrace, auto", env);
				return -EINVAL;
			}
		}
	}

	switch (kind) {
	case FREEZE_BACKEND_AUTO:
		err = open_kmod(&b, err_msg, err_len);
		if (err == -ENOENT)
			err = freeze_ptrace_open(&b, err_msg, err_len);
		break;
	case FREEZE_BACKEND_KMOD:
		err = open_kmod(&b, err_msg, err_len);
		break;
	case FREEZE_BACKEND_PTRACE:
		err = freeze_ptrace_open(&b, err_msg, err_len);
		break;
	default:
		snprintf(err_msg, err_len, "unknown freeze backend %d", (int)kind);
		return -EINVAL;
	}
	if (err < 0)
		return err;
	err_msg[0] = '\0';
	*ret = b;
	return 0;
}

void freeze_backend_close(struct freeze_backend *b)
{
	if (b)
		b->ops->close(b);
}

const char *freeze_backend_name(const struct freeze_backend *b)
{
	return b ? b->ops->name : "none";
}

enum freeze_backend_kind freeze_backend_kind(const struct freeze_backend *b)
{
	return b->kind;
}

/* Common argument checks; picks a scratch error buffer when none is given. */
#define PREPARE(b, pid, err_msg, err_len)					\
	char scratch_[SCRATCH_LEN];						\
	do {									\
		if (!(err_msg) || !(err_len)) {					\
			(err_msg) = scratch_;					\
			(err_len) = sizeof(scratch_);				\
		}								\
		(err_msg)[0] = '\0';						\
		if (!(b)) {							\
			snprintf(err_msg, err_len, "no freeze backend open");	\
			return -EINVAL;						\
		}								\
		if ((pid) <= 0) {						\
			snprintf(err_msg, err_len, "invalid pid %d", (int)(pid)); \
			return -EINVAL;						\
		}								\
	} while (0)

int freeze_process(struct freeze_backend *b, pid_t pid, unsigned int flags,
		   char *err_msg, size_t err_len)
{
	PREPARE(b, pid, err_msg, err_len);
	if (flags & ~FREEZE_F_PERSIST) {
		snprintf(err_msg, err_len, "unknown freeze flags 0x%x", flags & ~FREEZE_F_PERSIST);
		return -EINVAL;
	}
	return b->ops->freeze(b, pid, flags, err_msg, err_len);
}

int freeze_thaw(struct freeze_backend *b, pid_t pid, char *err_msg, size_t err_len)
{
	PREPARE(b, pid, err_msg, err_len);
	return b->ops->thaw(b, pid, err_msg, err_len);
}

int freeze_query(struct freeze_backend *b, pid_t pid, struct freeze_thread *threads,
		  size_t max, char *err_msg, size_t err_len)
{
	PREPARE(b, pid, err_msg, err_len);
	if (max && !threads) {
		snprintf(err_msg, err_len, "no thread array for %zu threads", max);
		return -EINVAL;
	}
	return b->ops->query(b, pid, threads, max, err_msg, err_len);
}

int freeze_requeue_sigcont(struct freeze_backend *b, pid_t pid, bool shared, const pid_t *tids,
			   size_t nr, char *err_msg, size_t err_len)
{
	PREPARE(b, pid, err_msg, err_len);
	if (nr > FREEZE_MAX_SIGCONT_TIDS || (nr && !tids)) {
		snprintf(err_msg, err_len, "%zu thread ids for pid %d: at most %d, in an array",
			 nr, (int)pid, FREEZE_MAX_SIGCONT_TIDS);
		return -EINVAL;
	}
	if (!b->ops->requeue_sigcont) {
		snprintf(err_msg, err_len, "the %s backend never ends a group stop", b->ops->name);
		return -EOPNOTSUPP;
	}
	return b->ops->requeue_sigcont(b, pid, shared, tids, nr, err_msg, err_len);
}

int freeze_push_hook(struct freeze_backend *b, pid_t pid, pid_t tid, uint64_t trampoline,
	      uint64_t arg, char *err_msg, size_t err_len)
{
	PREPARE(b, pid, err_msg, err_len);
	if (tid < 0 || !trampoline) {
		snprintf(err_msg, err_len, "freeze_push_hook needs a trampoline address and tid >= 0");
		return -EINVAL;
	}
	return b->ops->push_hook(b, pid, tid, trampoline, arg, err_msg, err_len);
}
