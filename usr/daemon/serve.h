/* SPDX-License-Identifier: GPL-2.0 */
/* One connection to the service: its request, authorized and carried out. */
#ifndef CRDBGD_SERVE_H
#define CRDBGD_SERVE_H

/* Serve the connected socket fd (in a process of its own); returns the exit code. */
int crdbgd_serve(int fd);

#endif /* CRDBGD_SERVE_H */
