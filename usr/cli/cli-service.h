/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checkpoint commands of a user who is not root: sent to the node's
 * service, crdbgd (<crdbg/crdbgd.h>), which runs CRIU for them once the
 * kernel's checks say the processes and checkpoints are theirs. Root's
 * crdbg works directly, as it always did.
 */
#ifndef CRDBG_CLI_SERVICE_H
#define CRDBG_CLI_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include <crdbg/crs.h>

/* Whether this crdbg sends its checkpoint commands to the service (not root). */
bool cli_service_wanted(void);

/*
 * Each: 0, or an errno with the one line in err (the service's own, or
 * why it could not be asked). store is the directory the user named (the
 * service gets it as an fd we opened), or NULL for the node's store.
 */
int cli_service_checkpoint(const struct crs_checkpoint_opts *o, char *ret_handle, size_t len,
			   char *err, size_t errlen);
int cli_service_restart(const struct crs_restart_opts *o, int *ret_status, char *err,
			size_t errlen);
int cli_service_verify(const char *store, const char *handle, char *err, size_t errlen);
int cli_service_rm(const char *store, const char *handle, char *err, size_t errlen);
/* fn as crs_store_list() calls it, for each of the caller's checkpoints. */
int cli_service_list(const char *store, crs_store_list_fn fn, void *arg, char *err,
		     size_t errlen);

#endif /* CRDBG_CLI_SERVICE_H */
