// SPDX-License-Identifier: GPL-2.0
/*
 * mprotect: one mapping split into read-write, read-only, no-access and
 * read-write again; a separate read-only page and an executable page
 * with code. After the word the protections are as set (per
 * /proc/self/maps and by touching: a write to read-only and any access
 * to no-access faults, checked in children), the contents as written.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fidelity.h"

#define PG 4096

/* Permissions of the mapping that holds addr, from /proc/self/maps. */
static void perms_of(void *addr, char out[5])
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512], p[5];
	FILE *f = fopen("/proc/self/maps", "re");

	strcpy(out, "????");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && a >= lo && a < hi) {
			memcpy(out, p, 5);
			break;
		}
	if (f)
		fclose(f);
}

/* Does touching addr (write or read) kill a child with SIGSEGV? */
static bool faults(volatile char *addr, bool write)
{
	int st;
	pid_t kid = fork();

	if (kid == 0) {
		signal(SIGSEGV, SIG_DFL);
		if (write)
			*addr = 1;
		else
			(void)*addr;
		_exit(0);
	}
	return waitpid(kid, &st, 0) == kid && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

static const unsigned char ret42[] = { 0xb8, 42, 0, 0, 0, 0xc3 };	/* mov $42,%eax; ret */

int main(int argc, char **argv)
{
	char *m, *ro, *code, p[5];
	int (*fn)(void);

	fid_init(argc, argv);
	m = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	code = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || ro == MAP_FAILED || code == MAP_FAILED)
		fid_die("mmap: %s", strerror(errno));
	memset(m, 'a', 4 * PG);
	memset(ro, 'r', PG);
	memcpy(code, ret42, sizeof(ret42));
	if (mprotect(m + PG, PG, PROT_READ) || mprotect(m + 2 * PG, PG, PROT_NONE) ||
	    mprotect(ro, PG, PROT_READ) || mprotect(code, PG, PROT_READ | PROT_EXEC))
		fid_die("mprotect: %s", strerror(errno));
	fid_ready_wait();

	perms_of(m, p);
	FID_CHECK(!strcmp(p, "rw-p"), "first page: %s", p);
	perms_of(m + PG, p);
	FID_CHECK(!strcmp(p, "r--p"), "read-only page: %s", p);
	perms_of(m + 2 * PG, p);
	FID_CHECK(!strcmp(p, "---p"), "no-access page: %s", p);
	perms_of(m + 3 * PG, p);
	FID_CHECK(!strcmp(p, "rw-p"), "last page: %s", p);
	perms_of(code, p);
	FID_CHECK(!strcmp(p, "r-xp"), "code page: %s", p);
	FID_CHECK(m[0] == 'a' && m[PG] == 'a' && m[3 * PG + 7] == 'a' && ro[100] == 'r',
		  "contents differ");
	FID_CHECK(faults(m + PG, true), "write to the read-only page did not fault");
	FID_CHECK(faults(ro, true), "write to the read-only mapping did not fault");
	FID_CHECK(faults(m + 2 * PG, false), "read of the no-access page did not fault");
	FID_CHECK(!faults(m + 3 * PG, true), "write to a read-write page faulted");
	fn = (int (*)(void))code;
	FID_CHECK(fn() == 42, "the executable page does not run");
	FID_CHECK(faults(code, true), "write to the executable page did not fault");
	fid_finish();
}
