// SPDX-License-Identifier: GPL-2.0
/*
 * Unlinked open files and file positions: DIR/ghost (64 KiB of a
 * pattern) opened, mapped shared read-only and unlinked; DIR/kept open
 * O_APPEND at offset 0 and DIR/pos open at offset 1234. After the word
 * the unlinked file has its contents and no name, the mapping shows
 * them, offsets and flags are as they were.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include "fidelity.h"

#define SIZE (64 * 1024)

int main(int argc, char **argv)
{
	static char buf[SIZE], back[SIZE];
	int gh, kept, pos, i;
	struct stat st;
	char *map;

	fid_init(argc, argv);
	for (i = 0; i < SIZE; i++)
		buf[i] = (char)(i % 253);
	gh = open(fid_path("ghost"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	kept = open(fid_path("kept"), O_RDWR | O_CREAT | O_APPEND, 0600);
	pos = open(fid_path("pos"), O_RDWR | O_CREAT, 0600);
	if (gh < 0 || kept < 0 || pos < 0 || write(gh, buf, SIZE) != SIZE ||
	    write(kept, "abc", 3) != 3 || ftruncate(pos, 4096) || lseek(pos, 1234, SEEK_SET) != 1234)
		fid_die("set-up: %s", strerror(errno));
	map = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, gh, 0);
	if (map == MAP_FAILED || unlink(fid_path("ghost")))
		fid_die("mmap/unlink: %s", strerror(errno));
	fid_ready_wait();

	FID_CHECK(!fstat(gh, &st) && st.st_nlink == 0 && st.st_size == SIZE,
		  "unlinked file: %ld links, %ld bytes", (long)st.st_nlink, (long)st.st_size);
	FID_CHECK(access(fid_path("ghost"), F_OK), "the unlinked file has a name again");
	FID_CHECK(pread(gh, back, SIZE, 0) == SIZE && !memcmp(buf, back, SIZE),
		  "unlinked file: contents differ");
	FID_CHECK(!memcmp(map, buf, SIZE), "mapping of the unlinked file differs");
	FID_CHECK(lseek(pos, 0, SEEK_CUR) == 1234, "offset %ld, want 1234", (long)lseek(pos, 0, SEEK_CUR));
	FID_CHECK(fcntl(kept, F_GETFL) & O_APPEND, "O_APPEND lost");
	FID_CHECK(lseek(kept, 0, SEEK_CUR) == 3, "O_APPEND file offset %ld", (long)lseek(kept, 0, SEEK_CUR));
	FID_CHECK((fcntl(pos, F_GETFL) & O_ACCMODE) == O_RDWR, "access mode changed");
	fid_finish();
}
