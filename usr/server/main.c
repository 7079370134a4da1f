// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg-server: the SDM server of a debug session, one per node of an
 * MPI job (driving a gdb per rank of the node) or one per rank of a
 * crdbg debug -n N job, started by the console's front end locally or
 * through the job's launcher. The SDM library does the tree; the backends here
 * do the debugging.
 */
#include "backends.h"

static const struct sdm_backend_ops *const backends[] = {
	&crdbg_backend_gdb,
	&sdm_backend_echo,
	NULL,
};

int main(int argc, char **argv)
{
	return sdm_server_main(argc, argv, backends);
}
