// SPDX-License-Identifier: GPL-2.0
/* Stopped children, stopped by SIGTSTP (a terminal stop): see prog_stopped.c. */
#define STOP_SIG SIGTSTP
#include "prog_stopped.c"
