// SPDX-License-Identifier: GPL-2.0
/*
 * The smallest MPIR starter: it defines the three MPIR symbols itself and
 * starts argv[1] as its one "rank". The probe tests read its symbol table
 * (also from a separate debug file once it is stripped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct MPIR_PROCDESC {
	char *host_name;
	char *executable_name;
	int pid;
};

struct MPIR_PROCDESC *MPIR_proctable;
int MPIR_proctable_size;
volatile int MPIR_being_debugged;
volatile int MPIR_debug_state;

void MPIR_Breakpoint(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	static struct MPIR_PROCDESC rank0 = { "localhost", NULL, 0 };
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PROGRAM [ARG...]\n", argv[0]);
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	rank0.executable_name = argv[1];
	rank0.pid = pid;
	MPIR_proctable = &rank0;
	MPIR_proctable_size = 1;
	MPIR_debug_state = 1;
	MPIR_Breakpoint();
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
