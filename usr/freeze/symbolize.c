// SPDX-License-Identifier: GPL-2.0
/*
 * Address to "symbol+offset" for another process, for `crdbg threads`.
 * Reads /proc/PID/maps to find the file and its load address, then the
 * file's .symtab (or .dynsym) directly; every offset read from the file
 * is bounds-checked, since the file may be anything.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crdbg/symbolize.h>

#define MAX_ELF_SIZE	(1ULL << 31)

struct mapping {
	uint64_t start, end, offset;
	char path[4096];
};

/*
 * Parse one /proc/PID/maps line into start, end, file offset and the
 * (newline-stripped, possibly empty) name; false for a line that isn't one.
 */
static bool parse_maps_line(char *line, uint64_t *start, uint64_t *end, uint64_t *off,
			    char **name)
{
	int name_at = 0;
	char *nl;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n",
		   start, end, off, &name_at) < 3 || !name_at)
		return false;
	*name = line + name_at;
	nl = strchr(*name, '\n');
	if (nl)
		*nl = '\0';
	return true;
}

static FILE *open_maps(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	return fopen(path, "re");
}

/* Find the mapping of pid holding addr, and where its file starts. */
static int find_mapping(pid_t pid, uint64_t addr, struct mapping *m)
{
	char line[4096 + 256], *name;
	uint64_t start, end, off;
	bool found = false;
	FILE *f = open_maps(pid);

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!parse_maps_line(line, &start, &end, &off, &name))
			continue;
		if (addr >= start && addr < end) {
			m->start = start;
			m->end = end;
			m->offset = off;
			snprintf(m->path, sizeof(m->path), "%s", name);
			found = true;
			break;
		}
	}
	fclose(f);
	if (!found || !m->path[0])
		return -ENOENT;
	return 0;
}

/* The lowest start of an offset-0 mapping of m->path (the load base). */
static uint64_t load_base(pid_t pid, const struct mapping *m)
{
	char line[4096 + 256], *name;
	uint64_t start, end, off, base = 0;
	FILE *f = open_maps(pid);

	if (!f)
		return m->start - m->offset;
	while (fgets(line, sizeof(line), f)) {
		if (!parse_maps_line(line, &start, &end, &off, &name))
			continue;
		if (off == 0 && !strcmp(name, m->path) && (!base || start < base))
			base = start;
	}
	fclose(f);
	return base ? base : m->start - m->offset;
}

static bool in_file(uint64_t off, uint64_t size, uint64_t file_size)
{
	return off <= file_size && size <= file_size - off;
}

/* Best symbol covering vaddr in one symbol table section; 0 when found. */
static int search_symtab(const uint8_t *img, uint64_t size, const Elf64_Ehdr *eh,
			 const Elf64_Shdr *sh, uint64_t vaddr, char *buf, size_t len)
{
	const Elf64_Shdr *strs;
	const Elf64_Sym *syms;
	uint64_t i, n;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= eh->e_shnum ||
	    !in_file(sh->sh_offset, sh->sh_size, size))
		return -ENOENT;
	strs = (const Elf64_Shdr *)(img + eh->e_shoff) + sh->sh_link;
	if (!in_file(strs->sh_offset, strs->sh_size, size) || !strs->sh_size)
		return -ENOENT;
	syms = (const Elf64_Sym *)(img + sh->sh_offset);
	n = sh->sh_size / sizeof(Elf64_Sym);
	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = &syms[i];
		const char *name;
		int type = ELF64_ST_TYPE(s->st_info);

		if (s->st_shndx == SHN_UNDEF || !s->st_size ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
			continue;
		if (vaddr < s->st_value || vaddr - s->st_value >= s->st_size)
			continue;
		if (s->st_name >= strs->sh_size)
			continue;
		name = (const char *)img + strs->sh_offset + s->st_name;
		if (!memchr(name, '\0', strs->sh_size - s->st_name) || !*name)
			continue;
		snprintf(buf, len, "%s+0x%" PRIx64, name, vaddr - s->st_value);
		return 0;
	}
	return -ENOENT;
}

static int lookup_elf(const uint8_t *img, uint64_t size, uint64_t base, uint64_t addr,
		      char *buf, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *shdrs;
	uint64_t bias = 0, lowest = UINT64_MAX, vaddr;
	int pass, i;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	if (eh->e_phentsize == sizeof(Elf64_Phdr) &&
	    in_file(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), size)) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);

		for (i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lowest)
				lowest = ph[i].p_vaddr & ~0xfffULL;
	}
	if (eh->e_type == ET_DYN && lowest != UINT64_MAX)
		bias = base - lowest;
	vaddr = addr - bias;

	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
		return -ENOENT;
	shdrs = (const Elf64_Shdr *)(img + eh->e_shoff);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < eh->e_shnum; i++)
			if (shdrs[i].sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB) &&
			    !search_symtab(img, size, eh, &shdrs[i], vaddr, buf, len))
				return 0;
	return -ENOENT;
}

int freeze_sym_describe(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct mapping m;
	struct stat st;
	const char *file;
	void *img;
	int fd, err;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	err = find_mapping(pid, addr, &m);
	if (err < 0)
		return err;
	if (m.path[0] == '[') {
		snprintf(buf, len, "%s", m.path);
		return 0;
	}
	file = strrchr(m.path, '/');
	file = file ? file + 1 : m.path;
	fd = open(m.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto file_only;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > MAX_ELF_SIZE) {
		close(fd);
		goto file_only;
	}
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		goto file_only;
	err = lookup_elf(img, (uint64_t)st.st_size, load_base(pid, &m), addr, buf, len);
	munmap(img, (size_t)st.st_size);
	if (!err)
		return 0;
file_only:
	snprintf(buf, len, "%s+0x%" PRIx64, file, addr - m.start + m.offset);
	return 0;
}
