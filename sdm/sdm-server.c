// SPDX-License-Identifier: GPL-2.0
/* sdm-server: the SDM server with the echo backend (tests, benchmarks). */
#include "sdm/server.h"

static const struct sdm_backend_ops *const backends[] = {
	&sdm_backend_echo,
	NULL,
};

int main(int argc, char **argv)
{
	return sdm_server_main(argc, argv, backends);
}
