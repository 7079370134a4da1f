// SPDX-License-Identifier: GPL-2.0
/*
 * Shared and private mappings: private anonymous memory with a pattern,
 * shared anonymous memory a child writes to after the word (and we read),
 * a shared file mapping of DIR/shared, a private file mapping of DIR/priv
 * with some pages changed (copy-on-write) and some not. After the word
 * the contents are as set, the private copy is still private (the file
 * is untouched), and shared memory is still shared with the child.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "fidelity.h"

#define PG 4096
#define NPG 16

static int file_of(const char *name, char fill)
{
	static char page[PG];
	int fd = open(fid_path(name), O_RDWR | O_CREAT | O_TRUNC, 0644), i;

	memset(page, fill, PG);
	for (i = 0; fd >= 0 && i < NPG; i++)
		if (write(fd, page, PG) != PG)
			fid_die("write %s", name);
	if (fd < 0)
		fid_die("%s: %s", name, strerror(errno));
	return fd;
}

static bool all(const char *p, size_t len, char c)
{
	while (len--)
		if (*p++ != c)
			return false;
	return true;
}

int main(int argc, char **argv)
{
	char *priv, *shared, *fshared, *fpriv, page[PG];
	int fs, fp, i, st;
	pid_t kid;

	fid_init(argc, argv);
	priv = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shared = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fs = file_of("shared", 's');
	fp = file_of("priv", 'p');
	fshared = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fs, 0);
	fpriv = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fp, 0);
	if (priv == MAP_FAILED || shared == MAP_FAILED || fshared == MAP_FAILED || fpriv == MAP_FAILED)
		fid_die("mmap: %s", strerror(errno));
	for (i = 0; i < NPG * PG; i++)
		priv[i] = (char)(i * 31 + 5);
	memset(shared, 'a', NPG * PG);
	memset(fshared + 3 * PG, 'S', PG);
	memset(fpriv + 5 * PG, 'P', PG);	/* one private copy; the rest maps the file */
	(void)fpriv[9 * PG];
	kid = fork();
	if (kid == 0) {
		while (access(fid_path("go"), F_OK))
			fid_nap_ms(20);
		memset(shared + PG, 'k', PG);	/* the parent must see this */
		_exit(all(shared, PG, 'a') && all(priv + PG, 1, (char)(PG * 31 + 5)) ? 0 : 1);
	}
	fid_ready_wait();

	for (i = 0; i < NPG * PG; i++)
		if (priv[i] != (char)(i * 31 + 5))
			break;
	FID_CHECK(i == NPG * PG, "private anonymous memory differs at %d", i);
	FID_CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st), "child failed");
	FID_CHECK(all(shared + PG, PG, 'k') && all(shared, PG, 'a') && all(shared + 2 * PG, PG, 'a'),
		  "shared anonymous memory: the child's write not seen");
	FID_CHECK(all(fshared + 3 * PG, PG, 'S') && all(fshared, PG, 's'), "shared file mapping differs");
	FID_CHECK(pread(fs, page, PG, 3 * PG) == PG && all(page, PG, 'S'),
		  "shared file mapping: the file does not show the write");
	FID_CHECK(all(fpriv + 5 * PG, PG, 'P') && all(fpriv, PG, 'p') && all(fpriv + 9 * PG, PG, 'p'),
		  "private file mapping differs");
	FID_CHECK(pread(fp, page, PG, 5 * PG) == PG && all(page, PG, 'p'),
		  "private file mapping: the copy-on-write page reached the file");
	fpriv[7 * PG] = 'x';
	FID_CHECK(pread(fp, page, 1, 7 * PG) == 1 && page[0] == 'p', "private mapping no longer private");
	fid_finish();
}
