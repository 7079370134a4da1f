/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Name the code at an address of another process: the mapping from
 * /proc/PID/maps, then the ELF .symtab/.dynsym of the mapped file.
 */
#ifndef CRDBG_SYMBOLIZE_H
#define CRDBG_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Write "symbol+0xoff" (or "[vdso]", or "file+0xoff" when no symbol
 * covers addr) into buf. Returns 0, or -ENOENT when addr is in no
 * file-backed mapping, or another negative errno.
 */
int freeze_sym_describe(pid_t pid, uint64_t addr, char *buf, size_t len);

#endif /* CRDBG_SYMBOLIZE_H */
