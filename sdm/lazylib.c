// SPDX-License-Identifier: GPL-2.0
/* See sdm/include/sdm/lazylib.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "sdm/lazylib.h"

static int resolve(struct lazylib *l)
{
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!h) {
		const char *e = dlerror();

		snprintf(l->why, sizeof(l->why), "cannot load %s: %s", l->soname,
			 e ? e : "not found");
		return -ELIBACC;
	}
	for (i = 0; i < l->nr_syms; i++) {
		void *p = dlsym(h, l->syms[i].name);

		if (!p) {
			snprintf(l->why, sizeof(l->why), "%s has no %s", l->soname,
				 l->syms[i].name);
			dlclose(h);
			return -ELIBACC;
		}
		*l->syms[i].addr = p;
	}
	return 1;	/* the handle stays open: the symbols are used until exit */
}

int lazylib_load(struct lazylib *l, char *why, size_t len)
{
	int state;

	pthread_mutex_lock(&l->lock);
	if (!l->state)
		l->state = resolve(l);
	state = l->state;
	pthread_mutex_unlock(&l->lock);
	if (state < 0 && why && len)
		snprintf(why, len, "%s", l->why);
	return state < 0 ? state : 0;
}
