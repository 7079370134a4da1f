// SPDX-License-Identifier: GPL-2.0
/*
 * The program the GDB/MI driver tests debug. Lines the tests break at
 * carry a MARK_ comment; the tests look the line numbers up by it.
 *   prog_simple          compute, print "x=16", exit 0
 *   prog_simple echo     then read a line from stdin and print "got:LINE"
 *   prog_simple busy     then spin forever (for interrupt and attach)
 */
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

static int square(int v)
{
	int r = v * v;	/* MARK_SQUARE */

	return r;
}

/* Inlined at two call sites: "break twice" has two locations. */
static inline __attribute__((always_inline)) int twice(int v)
{
	return v + v;	/* MARK_TWICE */
}

/* Announces itself from inside: once "spinning" is out, busy() is on the stack. */
static void busy(void)
{
	volatile unsigned long n = 0;

	printf("spinning\n");
	fflush(stdout);
	for (;;)
		n++;	/* MARK_BUSY */
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char line[128];
	int x = 4;

	x = square(x);	/* MARK_CALL */
	printf("x=%d\n", x);	/* MARK_AFTER */
	fflush(stdout);
	if (!strcmp(mode, "echo")) {
		if (fgets(line, sizeof(line), stdin))
			printf("got:%s", line);
		fflush(stdout);
	} else if (!strcmp(mode, "busy")) {
		/* Let a debugger that is not our parent attach (Yama). */
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
		busy();
	}
	if (twice(x) != 32)
		return 1;
	return twice(x) == 32 ? 0 : 1;
}
