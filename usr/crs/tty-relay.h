/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A terminal of its own for a restored tree: a new pty whose slave takes
 * the place of the terminal the tree had (criu --inherit-fd, see
 * tree-stdio.h) and whose master crdbg holds, copying what the tree
 * writes to our terminal and what is typed there to the tree, as
 * script(1) does. Documentation/checkpoint.md, "Stdio and terminals at
 * restart".
 */
#ifndef CRDBG_CRS_TTY_RELAY_H
#define CRDBG_CRS_TTY_RELAY_H

#include <pthread.h>
#include <stdbool.h>
#include <termios.h>

struct crs_tty_relay {
	int master, slave;	/* -1 when closed */
	int in, out;		/* copied to the master, written from it; -1: none */
	bool raw;		/* in is a terminal the relay put in raw mode */
	struct termios saved;
	pthread_t thread;
	bool running;
};

#define CRS_TTY_RELAY_INIT { .master = -1, .slave = -1, .in = -1, .out = -1 }

/*
 * Make the pty (its size taken from in or out when they are terminals)
 * and start copying in a thread; in is put in raw mode, and read, once
 * the restored tree has the pty (until the end).
 */
int crs_tty_relay_open(struct crs_tty_relay *t, int in, int out, char *err, size_t errlen);

/* The slave's path ("/dev/pts/N") into buf. */
int crs_tty_relay_name(const struct crs_tty_relay *t, char *buf, size_t len);

/* Close our copy of the slave: the copying ends once nobody else holds it. */
void crs_tty_relay_drop_slave(struct crs_tty_relay *t);

/*
 * Drop the slave, wait until every holder of it closed it and everything
 * it wrote is out, give the terminal its mode back. Harmless if not open.
 */
void crs_tty_relay_finish(struct crs_tty_relay *t);

#endif /* CRDBG_CRS_TTY_RELAY_H */
