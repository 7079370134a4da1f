/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A shared library resolved on first use (dlopen) rather than by the
 * dynamic loader at every start of the program that links it. Each
 * library crdbg links costs every crdbg command its loading, whether
 * the command uses it or not: measured in the QEMU/TCG guest, libcrypto
 * 25 ms and readline 17 ms per exec, against 31 ms for a program that
 * links libc alone (Documentation/performance.md). A restart uses
 * neither; the SDM's authentication and the console do.
 *
 * Here, in the SDM's core, because both sides use it and dependencies
 * run from usr/ to sdm/, never back.
 */
#ifndef SDM_LAZYLIB_H
#define SDM_LAZYLIB_H

#include <pthread.h>
#include <stddef.h>

/* One symbol: its name and where its address goes (a function or a variable). */
struct lazylib_sym {
	const char *name;
	void **addr;
};

struct lazylib {
	const char *soname;		/* e.g. "libcrypto.so.3" */
	const struct lazylib_sym *syms;
	size_t nr_syms;
	pthread_mutex_t lock;
	int state;			/* 0 not tried, 1 loaded, -ELIBACC */
	char why[256];			/* the failure, one line */
};

#define LAZYLIB_INIT(name, table) {					\
	.soname = (name), .syms = (table),				\
	.nr_syms = sizeof(table) / sizeof((table)[0]),			\
	.lock = PTHREAD_MUTEX_INITIALIZER,				\
}

/*
 * Load the library and resolve every symbol, once (thread-safe). 0, or
 * -ELIBACC with why (if not NULL) saying which library or symbol is
 * missing; a failure is final.
 */
int lazylib_load(struct lazylib *l, char *why, size_t len);

#endif /* SDM_LAZYLIB_H */
