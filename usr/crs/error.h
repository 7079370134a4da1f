/* SPDX-License-Identifier: GPL-2.0 */
/* One-line error messages for the checkpoint/restart service. */
#ifndef CRDBG_CRS_ERROR_H
#define CRDBG_CRS_ERROR_H

#include <stddef.h>

/*
 * Format a one-line reason into err (when err and errlen are non-zero) and
 * return ret, so a failure path reads: return crs_fail(err, len, -EINVAL, ...).
 */
int crs_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* CRDBG_CRS_ERROR_H */
