/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The credentials CRIU will give each restored thread, read from its
 * core-TID.img (core_entry.thread_core.creds, a protobuf creds_entry)
 * without CRIU's own decoder: the service restores only a tree whose
 * every thread comes back with its owner's uids and gids and no
 * capability, so that a forged image cannot make a user's tree root's.
 */
#ifndef CRDBG_CRS_CRIU_CREDS_H
#define CRDBG_CRS_CRIU_CREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CRS_CREDS_MAX_GROUPS	65536
#define CRS_CORE_IMG_MAX	(1u << 20)	/* a core image larger than this is refused */

struct crs_criu_creds {
	uint32_t uid, gid, euid, egid, suid, sgid, fsuid, fsgid;
	uint32_t have;		/* bit n: field n + 1 was present (uid .. fsgid) */
	bool caps;		/* any bit of cap_inh, cap_prm or cap_eff set */
	size_t nr_groups;
	uint32_t groups[64];	/* the first 64 supplementary groups */
	bool groups_truncated;	/* more than 64: checked all the same, as they are read */
};

/*
 * Decode a core image (its two magics, then its one entry): 0 with
 * *ret filled, -EBADMSG when it is not a well-formed core image with
 * creds. Every length is checked against len.
 */
int crs_criu_creds_parse(const void *buf, size_t len, struct crs_criu_creds *ret);

/*
 * 0 if every core-*.img in the images directory dfd gives uid, gid's
 * credentials (uid in real, effective, saved and fs; gid likewise; each
 * supplementary group one of the groups[nr_groups]; no capability);
 * else -EPERM (or the decoder's error) with one line naming the image.
 */
int crs_criu_creds_check(int dfd, uid_t uid, gid_t gid, const gid_t *groups, size_t nr_groups,
			 char *err, size_t errlen);

struct crs_meta;

/*
 * What crs_restart() asks of a checkpoint that has a non-root owner:
 * crs_criu_creds_check() of its images in dir against the owner's uid,
 * gid and supplementary groups (as the system knows them now).
 */
int crs_criu_creds_owner_check(const char *dir, const struct crs_meta *m, char *err,
			       size_t errlen);

#endif /* CRDBG_CRS_CRIU_CREDS_H */
