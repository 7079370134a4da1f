/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pipeline of stages and its timing table, as checkpoint.c and
 * restart.c run theirs: a table of stages (a name and a function each,
 * indexed by the pipeline's enum of stages), run in order on the
 * pipeline's state until one fails; the end of each stage is marked on
 * crs_clock_ms()'s clock. The caller undoes what its state says was done
 * (crs_stages_run() does not know the state). -v prints the table as one
 * line: "crdbg: HEAD TOTAL ms: NAME MS[ NOTE], ..." in the stages' order.
 */
#ifndef CRDBG_CRS_STAGES_H
#define CRDBG_CRS_STAGES_H

#include <stddef.h>
#include <stdio.h>

#define CRS_STAGES_MAX	16
#define CRS_STAGE_NOTE	64

struct crs_stage {
	const char *name;	/* in -v's table */
	int (*run)(void *state);	/* 0, or a negative errno (its message set) */
};

struct crs_timing {
	const struct crs_stage *stages;
	size_t nr;
	double start;			/* crs_clock_ms() at crs_timing_start() */
	double end[CRS_STAGES_MAX];	/* each stage's end, 0 until it ran */
	char note[CRS_STAGES_MAX][CRS_STAGE_NOTE];	/* printed after its ms */
};

/* The clock starts: nr stages (at most CRS_STAGES_MAX), none run. */
void crs_timing_start(struct crs_timing *t, const struct crs_stage *stages, size_t nr);

/* Stage i ends now, or at ms. */
void crs_timing_mark(struct crs_timing *t, size_t i);
void crs_timing_mark_at(struct crs_timing *t, size_t i, double ms);

/* Stage i's milliseconds: from the end of the one before it (or the start) to its own. */
double crs_timing_ms(const struct crs_timing *t, size_t i);

/* From the start to the end of the last stage. */
double crs_timing_total(const struct crs_timing *t);

/* What the table says after stage i's milliseconds, e.g. "(stopped 12)". */
void crs_timing_note(struct crs_timing *t, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The table, one line on f. */
void crs_timing_print(const struct crs_timing *t, FILE *f, const char *head);

/*
 * Run t's stages in order on state, marking each one's end: 0 once all
 * ran, or the first failure's return value (the stages after it do not
 * run).
 */
int crs_stages_run(struct crs_timing *t, void *state);

#endif /* CRDBG_CRS_STAGES_H */
