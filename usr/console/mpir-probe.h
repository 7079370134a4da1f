/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Does a program implement MPIR, the MPI Forum's process acquisition
 * interface? Decided by its symbols, not its name: MPIR_Breakpoint,
 * MPIR_proctable and MPIR_being_debugged must be defined by the
 * executable or one of the shared objects it loads (Open MPI keeps them
 * in libopen-rte, srun in itself). Symbol tables are read from the ELF
 * files, and from their separate debug files under
 * /usr/lib/debug/.build-id when a package installed them (a stripped
 * launcher such as Debian's mpiexec.hydra has its MPIR symbols only
 * there). CRDBG_DEBUG_FILE_DIR names another root for those files, as
 * gdb's debug-file-directory does; the console gives gdb the same one.
 */
#ifndef CRDBG_CONSOLE_MPIR_PROBE_H
#define CRDBG_CONSOLE_MPIR_PROBE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What the launcher's family changes; MPIR itself is the same for all. */
enum mpir_family {
	MPIR_FAMILY_OTHER,
	MPIR_FAMILY_ORTE,	/* Open MPI's mpirun: libopen-rte */
	MPIR_FAMILY_SLURM,	/* srun: tasks stopped at exec */
	MPIR_FAMILY_HYDRA,	/* MPICH's mpiexec.hydra, whatever it is called */
};

struct mpir_probe {
	bool found;			/* all three symbols defined */
	bool in_executable;		/* ...by the executable itself */
	enum mpir_family family;
	char object[PATH_MAX];		/* the file defining them */
	char executable[PATH_MAX];	/* the program, resolved */
};

/*
 * Probe PROG (a path, or a name looked up in PATH) and the shared objects
 * its dynamic loader would load. 0 with *ret filled (ret->found says
 * whether it implements MPIR), or -errno: -ENOENT when PROG is not found,
 * -ENOEXEC when it is not an ELF executable.
 */
int mpir_probe_program(const char *prog, struct mpir_probe *ret);

/* Probe the running process pid through the files it has mapped. */
int mpir_probe_pid(pid_t pid, struct mpir_probe *ret);

/*
 * Which of the three symbols the ELF image [buf, buf + len) defines, as
 * bits (1: MPIR_Breakpoint, 2: MPIR_proctable, 4: MPIR_being_debugged),
 * or -ENOEXEC if it is not a well-formed ELF64 file. Never reads outside
 * the buffer, whatever it holds. The build id, when there is one, goes
 * to id (hex, NUL-terminated; empty if none).
 */
int mpir_probe_elf(const void *buf, size_t len, char *id, size_t idlen);

/* Where separate debug files are looked up: CRDBG_DEBUG_FILE_DIR or /usr/lib/debug. */
const char *mpir_debug_file_dir(void);

#endif /* CRDBG_CONSOLE_MPIR_PROBE_H */
