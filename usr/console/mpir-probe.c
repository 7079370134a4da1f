// SPDX-License-Identifier: GPL-2.0
/*
 * MPIR by symbols (mpir-probe.h). The ELF reader trusts nothing in the
 * file: every offset and size is checked against the mapping before use,
 * and tests/fuzz/mpir_fuzz_elf.c (make fuzz) and the mutated images of
 * tests/console/test_mpir_probe.c feed it garbage.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpir-probe.h"

#define MPIR_SYMS_ALL		7
#define PROBE_MAX_OBJECTS	512
#define DEBUG_FILE_DIR		"/usr/lib/debug"

static const char *const mpir_syms[] = {
	"MPIR_Breakpoint", "MPIR_proctable", "MPIR_being_debugged",
};

/* [off, off + size) inside a buffer of len bytes, without overflow. */
static bool inside(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

static int symtab_bits(const uint8_t *buf, size_t len, const Elf64_Shdr *sh,
		       const Elf64_Shdr *strsh)
{
	uint64_t n = sh->sh_size / sizeof(Elf64_Sym);
	const char *str;
	int bits = 0;

	/* Even forming a pointer outside the image is undefined: check first. */
	if (sh->sh_entsize != sizeof(Elf64_Sym) ||
	    !inside(len, sh->sh_offset, sh->sh_size) ||
	    !inside(len, strsh->sh_offset, strsh->sh_size))
		return 0;
	str = (const char *)buf + strsh->sh_offset;
	for (uint64_t i = 0; i < n && bits != MPIR_SYMS_ALL; i++) {
		Elf64_Sym sym;
		const char *name;

		memcpy(&sym, buf + sh->sh_offset + i * sizeof(sym), sizeof(sym));
		if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strsh->sh_size)
			continue;
		name = str + sym.st_name;
		if (!memchr(name, 0, strsh->sh_size - sym.st_name))
			continue;
		for (int k = 0; k < 3; k++)
			if (!strcmp(name, mpir_syms[k]))
				bits |= 1 << k;
	}
	return bits;
}

/* The NT_GNU_BUILD_ID of a SHT_NOTE section, as hex. */
static void note_build_id(const uint8_t *buf, size_t len, const Elf64_Shdr *sh,
			  char *id, size_t idlen)
{
	uint64_t off = sh->sh_offset, end;

	if (!inside(len, sh->sh_offset, sh->sh_size))
		return;
	end = sh->sh_offset + sh->sh_size;
	while (end - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name, desc, next;

		memcpy(&nh, buf + off, sizeof(nh));
		name = off + sizeof(nh);
		desc = name + ((nh.n_namesz + 3ULL) & ~3ULL);
		next = desc + ((nh.n_descsz + 3ULL) & ~3ULL);
		if (next > end)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(buf + name, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz * 2 < idlen) {
			for (uint32_t i = 0; i < nh.n_descsz; i++)
				sprintf(id + 2 * i, "%02x", buf[desc + i]);
			return;
		}
		off = next;
	}
}

int mpir_probe_elf(const void *image, size_t len, char *id, size_t idlen)
{
	const uint8_t *buf = image;
	Elf64_Ehdr eh;
	int bits = 0;

	if (id && idlen)
		id[0] = 0;
	if (len < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh.e_shnum && eh.e_shentsize != sizeof(Elf64_Shdr)) ||
	    !inside(len, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))
		return -ENOEXEC;
	for (unsigned int i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, strsh;

		memcpy(&sh, buf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type == SHT_NOTE && id && idlen && !id[0])
			note_build_id(buf, len, &sh, id, idlen);
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		if (sh.sh_link >= eh.e_shnum)
			continue;
		memcpy(&strsh, buf + eh.e_shoff + sh.sh_link * sizeof(strsh),
		       sizeof(strsh));
		bits |= symtab_bits(buf, len, &sh, &strsh);
	}
	return bits;
}

const char *mpir_debug_file_dir(void)
{
	const char *d = getenv("CRDBG_DEBUG_FILE_DIR");

	return d && *d ? d : DEBUG_FILE_DIR;
}

/* Map path read-only and probe it; the debug file of its build id too. */
static int probe_file(const char *path, bool follow_id)
{
	char id[128], dbg[PATH_MAX];
	struct stat st;
	void *map;
	int fd, bits;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	bits = mpir_probe_elf(map, st.st_size, id, sizeof(id));
	munmap(map, st.st_size);
	if (bits >= 0 && bits != MPIR_SYMS_ALL && follow_id && strlen(id) > 2) {
		snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug",
			 mpir_debug_file_dir(), id, id + 2);
		if (access(dbg, R_OK) == 0) {
			int more = probe_file(dbg, false);

			if (more > 0)
				bits |= more;
		}
	}
	return bits;
}

static enum mpir_family family_of(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "libopen-rte.so", 14))
		return MPIR_FAMILY_ORTE;
	if (!strncmp(base, "libslurmfull.so", 15))
		return MPIR_FAMILY_SLURM;
	/* the executable's real file: mpiexec and mpirun.mpich are links to it */
	if (!strcmp(base, "mpiexec.hydra"))
		return MPIR_FAMILY_HYDRA;
	return MPIR_FAMILY_OTHER;
}

/* One object of the program: note its family, and whether it is MPIR's. */
static void probe_object(struct mpir_probe *p, const char *path, bool exe)
{
	enum mpir_family f = family_of(path);

	if (f != MPIR_FAMILY_OTHER)
		p->family = f;
	if (p->found || probe_file(path, true) != MPIR_SYMS_ALL)
		return;
	p->found = true;
	p->in_executable = exe;
	snprintf(p->object, sizeof(p->object), "%s", path);
}

/* prog as a path, or looked up in PATH; out has PATH_MAX bytes. */
static int resolve(const char *prog, char *out)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/')) {
		if (!realpath(prog, out))
			return -errno;
		return 0;
	}
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(buf, X_OK) == 0 && realpath(buf, out))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/* The PT_INTERP of an executable, or "" for a static one. */
static int interpreter(const char *exe, char *out, size_t size)
{
	Elf64_Ehdr eh;
	int fd = open(exe, O_RDONLY | O_CLOEXEC), rc = -ENOEXEC;

	out[0] = 0;
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		goto out;
	rc = 0;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph)) {
			rc = -ENOEXEC;
			break;
		}
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz < 2 || ph.p_filesz > size ||
		    pread(fd, out, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz ||
		    out[ph.p_filesz - 1]) {
			out[0] = 0;
			rc = -ENOEXEC;
		}
		break;
	}
out:
	close(fd);
	return rc;
}

/*
 * The shared objects exe loads, as its dynamic loader lists them
 * ("ld.so --list", what ldd runs: it maps and relocates, it runs none of
 * the program's code). Probes each.
 */
static void probe_libraries(struct mpir_probe *p, const char *exe,
			    const char *interp)
{
	char line[PATH_MAX + 64];
	int pfd[2];
	pid_t pid;
	FILE *f;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(pfd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		execl(interp, interp, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (!f) {
		close(pfd[0]);
	} else {
		for (int n = 0; n < PROBE_MAX_OBJECTS && fgets(line, sizeof(line), f); n++) {
			char *arrow = strstr(line, "=> "), *path, *end;

			path = arrow ? arrow + 3 : line + strspn(line, " \t");
			if (*path != '/')
				continue;
			end = strstr(path, " (");
			if (!end)
				end = path + strcspn(path, "\n");
			*end = 0;
			probe_object(p, path, false);
		}
		fclose(f);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int mpir_probe_program(const char *prog, struct mpir_probe *ret)
{
	char interp[PATH_MAX];
	int rc;

	memset(ret, 0, sizeof(*ret));
	rc = resolve(prog, ret->executable);
	if (rc < 0)
		return rc;
	rc = interpreter(ret->executable, interp, sizeof(interp));
	if (rc < 0)
		return rc;
	probe_object(ret, ret->executable, true);
	if (interp[0])
		probe_libraries(ret, ret->executable, interp);
	return 0;
}

int mpir_probe_pid(pid_t pid, struct mpir_probe *ret)
{
	char path[64], line[PATH_MAX + 128], *seen = NULL;
	size_t seen_len = 0;
	FILE *f;

	memset(ret, 0, sizeof(*ret));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (!realpath(path, ret->executable))
		return errno == ENOENT ? -ESRCH : -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *grown;
		size_t n;

		if (!file || file == line)
			continue;
		file[strcspn(file, "\n")] = 0;
		n = strlen(file);
		if (n > 10 && !strcmp(file + n - 10, " (deleted)"))
			continue;
		/*
		 * Each file once (maps lists a file per segment): seen holds
		 * "\0path\0path\0...", so a search for "\0path\0" never
		 * matches the tail of a longer path.
		 */
		file[-1] = 0;
		if (seen && memmem(seen, seen_len, file - 1, n + 2))
			continue;
		grown = realloc(seen, seen_len + n + 2);
		if (!grown)
			break;
		seen = grown;
		memcpy(seen + seen_len, file - 1, n + 2);
		seen_len += n + 1;	/* the next one shares this NUL */
		probe_object(ret, file, !strcmp(file, ret->executable));
	}
	fclose(f);
	free(seen);
	return 0;
}
