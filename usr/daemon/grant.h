/* SPDX-License-Identifier: GPL-2.0 */
/*
 * After a checkpoint the service took for a user: its owner may read it
 * (Documentation/security.md, "Seals"). Nothing is followed: the
 * checkpoint's directory is opened beneath storefd without symlinks.
 */
#ifndef CRDBGD_GRANT_H
#define CRDBGD_GRANT_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Give uid read access (an ACL entry; the files stay root's) to the
 * checkpoint directory handle under storefd and to every directory and
 * plain file of root's beneath it (symlinks are not followed). Nothing
 * for uid 0. 0, or a negative errno with a line.
 */
int crdbgd_grant_read(int storefd, const char *handle, uid_t uid, char *err, size_t errlen);

#endif /* CRDBGD_GRANT_H */
