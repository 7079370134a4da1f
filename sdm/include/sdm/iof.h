/* SPDX-License-Identifier: GPL-2.0 */
/*
 * I/O forwarding (sdm_iof_*). A handler is attached to an input
 * descriptor and runs from the process's engine whenever it is readable;
 * the normal handler copies fd_in to fd_out. fd_out may be
 * SDM_IOF_UPSTREAM: the bytes then go to the sink given to sdm_iof_init(),
 * which in a server wraps them in an SDM_MSG_IOF message tagged with the
 * server's id and sends them towards the front end.
 *
 * Stdin arrives at a server as SDM_MSG_IOF messages; sdm_iof_stdin_write()
 * puts the bytes in a pipe whose read end is the fd_in of the stdin handler,
 * so a stdin handler sees a descriptor like the other two.
 *
 * The pty implementation: sdm_iof_pty_spawn() runs a program with a new
 * pseudo terminal as its stdin/stdout and a pipe as its stderr, and
 * installs the three default handlers (what the GDB backend will do with
 * GDB's -tty option: sdm_iof_pty_open() gives the pty alone).
 *
 * IOF payload on the wire: one byte stream number (0 stdin, 1 stdout,
 * 2 stderr) followed by the data.
 */
#ifndef SDM_IOF_H
#define SDM_IOF_H

#include <stddef.h>
#include <sys/types.h>

struct sdm_transport;

#define SDM_IOF_UPSTREAM	(-2)
#define SDM_IOF_STDIN		0
#define SDM_IOF_STDOUT		1
#define SDM_IOF_STDERR		2

typedef void (*sdm_iof_sink)(void *arg, int stream, const void *buf,
			     size_t len);
typedef int (*sdm_iof_handler)(int fd_in, int fd_out);

int sdm_iof_init(struct sdm_transport *engine, sdm_iof_sink sink, void *arg);
void sdm_iof_finalize(void);

/* handler NULL selects the default handler. 0 or -errno. */
int sdm_iof_set_stdin_handler(int fd_in, int fd_out, sdm_iof_handler h);
int sdm_iof_set_stdout_handler(int fd_in, int fd_out, sdm_iof_handler h);
int sdm_iof_set_stderr_handler(int fd_in, int fd_out, sdm_iof_handler h);

/* Default handlers: read what is there, write it to fd_out or upstream.
 * Return bytes moved, 0 at end of file (the handler is then removed),
 * or -errno. */
int sdm_iof_copy_stdin(int fd_in, int fd_out);
int sdm_iof_copy_stdout(int fd_in, int fd_out);
int sdm_iof_copy_stderr(int fd_in, int fd_out);

/* Stdin bytes from the front end for this process. 0 or -errno. */
int sdm_iof_stdin_write(const void *buf, size_t len);

/* A new pty in raw mode: master fd (non-blocking) and the slave's path. */
int sdm_iof_pty_open(int *ret_master, char *ret_slave, size_t size);
/* Run argv on a pty (see above); returns the child's pid or -errno. */
pid_t sdm_iof_pty_spawn(char *const argv[]);

#endif /* SDM_IOF_H */
