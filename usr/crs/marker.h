/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debugger-side parsers of the marker lines of seed 000: the restarted
 * process's "MPIR debug info) <host>:<pid>" (historical Open MPI spelling
 * "MPIR_debug_info)" accepted too) and the checkpoint command's
 * "MPIR checkpoint handle) <handle>" (or "MPIR_checkpoint_handle)").
 */
#ifndef CRDBG_CRS_MARKER_H
#define CRDBG_CRS_MARKER_H

#include <stddef.h>
#include <sys/types.h>

#define CRS_DEBUG_INFO_PREFIX	"MPIR debug info) "
#define CRS_HANDLE_PREFIX	"MPIR checkpoint handle) "

/* 0 and host/pid filled, -EINVAL if line is not such a marker. */
int crs_parse_debug_info(const char *line, char *host, size_t hostlen, pid_t *ret_pid);
int crs_parse_checkpoint_handle(const char *line, char *handle, size_t handlelen);

#endif /* CRDBG_CRS_MARKER_H */
