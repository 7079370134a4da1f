// SPDX-License-Identifier: GPL-2.0
/* A pipeline of stages and its timing table (stages.h). */
#include <stdarg.h>
#include <string.h>

#include "clock.h"
#include "stages.h"

void crs_timing_start(struct crs_timing *t, const struct crs_stage *stages, size_t nr)
{
	memset(t, 0, sizeof(*t));
	t->stages = stages;
	t->nr = nr < CRS_STAGES_MAX ? nr : CRS_STAGES_MAX;
	t->start = crs_clock_ms();
}

void crs_timing_mark_at(struct crs_timing *t, size_t i, double ms)
{
	if (i < t->nr)
		t->end[i] = ms;
}

void crs_timing_mark(struct crs_timing *t, size_t i)
{
	crs_timing_mark_at(t, i, crs_clock_ms());
}

double crs_timing_ms(const struct crs_timing *t, size_t i)
{
	double from = i ? t->end[i - 1] : t->start;

	return i < t->nr && t->end[i] ? t->end[i] - from : 0;
}

double crs_timing_total(const struct crs_timing *t)
{
	return t->nr && t->end[t->nr - 1] ? t->end[t->nr - 1] - t->start : 0;
}

void crs_timing_note(struct crs_timing *t, size_t i, const char *fmt, ...)
{
	va_list ap;

	if (i >= t->nr)
		return;
	va_start(ap, fmt);
	vsnprintf(t->note[i], sizeof(t->note[i]), fmt, ap);
	va_end(ap);
}

void crs_timing_print(const struct crs_timing *t, FILE *f, const char *head)
{
	size_t i;

	fprintf(f, "crdbg: %s %.0f ms:", head, crs_timing_total(t));
	for (i = 0; i < t->nr; i++)
		fprintf(f, "%s %s %.0f%s%s", i ? "," : "", t->stages[i].name, crs_timing_ms(t, i),
			t->note[i][0] ? " " : "", t->note[i]);
	fputc('\n', f);
}

int crs_stages_run(struct crs_timing *t, void *state)
{
	size_t i;
	int r;

	for (i = 0; i < t->nr; i++) {
		r = t->stages[i].run(state);
		crs_timing_mark(t, i);
		if (r)
			return r;
	}
	return 0;
}
