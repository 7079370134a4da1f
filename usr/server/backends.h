/* SPDX-License-Identifier: GPL-2.0 */
/* The backends of crdbg-server (see <sdm/server.h> for the contract). */
#ifndef CRDBG_SERVER_BACKENDS_H
#define CRDBG_SERVER_BACKENDS_H

#include "sdm/server.h"

/* One gdb per rank of the server, driven over GDB/MI (backend-gdb.c). */
extern const struct sdm_backend_ops crdbg_backend_gdb;

#endif /* CRDBG_SERVER_BACKENDS_H */
