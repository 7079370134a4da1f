// SPDX-License-Identifier: GPL-2.0
/*
 * The owner reads their own images (grant.h): a POSIX ACL entry for the
 * owner's uid on the checkpoint's directory and on each file in it, the
 * files staying root's, so that the owner can copy them but neither
 * change nor replace them (the seal would notice; and root reads them
 * at restart, which the owner must not race).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "grant.h"

#define ACL_XATTR	"system.posix_acl_access"

/*
 * The mode's owner and other bits, plus uid with perm, its mask perm
 * and no group: the kernel's xattr format (linux/posix_acl_xattr.h),
 * entries in the order it requires (tag, then id).
 */
static int set_owner_acl(int fd, mode_t mode, uid_t uid, unsigned short perm)
{
	struct {
		struct posix_acl_xattr_header h;
		struct posix_acl_xattr_entry e[5];
	} acl = {
		.h = { .a_version = POSIX_ACL_XATTR_VERSION },
		.e = {
			{ ACL_USER_OBJ, (mode >> 6) & 7, ACL_UNDEFINED_ID },
			{ ACL_USER, perm, uid },
			{ ACL_GROUP_OBJ, 0, ACL_UNDEFINED_ID },
			{ ACL_MASK, perm, ACL_UNDEFINED_ID },
			{ ACL_OTHER, 0, ACL_UNDEFINED_ID },
		},
	};

	return fsetxattr(fd, ACL_XATTR, &acl, sizeof(acl), 0) ? -errno : 0;
}

/*
 * dfd (a directory of root's) and what is beneath it, depth levels at
 * most: r-x on directories, r-- on plain files; anything else (a
 * symlink, a fifo, another's file) is left as it is. dfd is consumed.
 */
static int grant_tree(int dfd, uid_t uid, int depth)
{
	struct dirent *d;
	struct stat st;
	int r;
	DIR *dp;

	r = fstat(dfd, &st) ? -errno : st.st_uid ? -EPERM : 0;
	if (!r)
		r = set_owner_acl(dfd, st.st_mode, uid, ACL_READ | ACL_EXECUTE);
	dp = r ? NULL : fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return r ? r : -errno;
	}
	while (!r && (d = readdir(dp))) {
		int fd;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		fd = openat(dirfd(dp), d->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			r = errno == ELOOP ? 0 : -errno;	/* a symlink: left alone */
			continue;
		}
		if (fstat(fd, &st)) {
			r = -errno;
		} else if (S_ISDIR(st.st_mode) && depth > 0) {
			r = grant_tree(fd, uid, depth - 1);
			continue;
		} else if (S_ISREG(st.st_mode) && st.st_uid == 0) {
			r = set_owner_acl(fd, st.st_mode, uid, ACL_READ);
		}
		close(fd);
	}
	closedir(dp);
	return r;
}

int crdbgd_grant_read(int storefd, const char *handle, uid_t uid, char *err, size_t errlen)
{
	int dfd, r;

	if (!uid)
		return 0;
	dfd = openat(storefd, handle, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = dfd < 0 ? -errno : grant_tree(dfd, uid, 4);
	if (r)
		snprintf(err, errlen, "checkpoint %s: cannot let its owner read it: %s", handle,
			 strerror(-r));
	return r;
}
