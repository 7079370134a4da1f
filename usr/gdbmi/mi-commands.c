// SPDX-License-Identifier: GPL-2.0
/*
 * Typed wrappers over the command channel: breakpoints, run control,
 * expressions, frames and threads, attach and detach, each turning gdb's
 * answer into a struct of <crdbg/gdbmi.h>.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mi-driver.h"


static void frame_from(const struct mi_value *f, struct mi_frame *ret)
{
	long long v;

	memset(ret, 0, sizeof(*ret));
	ret->func = mi_get_str(f, "func");
	if (!ret->func)
		ret->func = "??";
	ret->file = mi_get_str(f, "file");
	ret->fullname = mi_get_str(f, "fullname");
	if (!mi_get_int(f, "line", &v) && v > 0 && v < INT32_MAX)
		ret->line = v;
	if (!mi_get_int(f, "level", &v) && v >= 0 && v < INT32_MAX)
		ret->level = v;
	mi_get_u64(f, "addr", &ret->addr);
}

static int get_small_int(const struct mi_value *v, const char *path)
{
	long long x;

	if (mi_get_int(v, path, &x) || x < INT32_MIN || x > INT32_MAX)
		return 0;
	return x;
}

int mi_stop_from_record(struct mi_record *rec, struct mi_stop *ret)
{
	const struct mi_value *r = rec->results;
	const char *reason;

	memset(ret, 0, sizeof(*ret));
	ret->rec = rec;
	reason = mi_get_str(r, "reason");
	ret->reason = reason ? reason : "";
	frame_from(mi_get(r, "frame"), &ret->frame);
	ret->thread_id = get_small_int(r, "thread-id");
	ret->bkptno = get_small_int(r, "bkptno");
	ret->signal = mi_get_str(r, "signal-name");
	if (!strncmp(ret->reason, "exited", 6)) {
		ret->exited = true;
		if (!strcmp(ret->reason, "exited-signalled"))
			ret->exit_code = -1;
		else
			ret->exit_code = get_small_int(r, "exit-code");
	}
	return 0;
}

void mi_stop_release(struct mi_stop *stop)
{
	if (!stop)
		return;
	mi_record_free(stop->rec);
	stop->rec = NULL;
}

int mi_wait_stop(struct mi_driver *d, int timeout_ms, struct mi_stop *ret_stop)
{
	int64_t deadline = mi_drv_deadline(timeout_ms);

	for (;;) {
		struct mi_record *rec;
		int r = mi_driver_next_event(d, mi_drv_remaining(deadline), &rec);

		if (r <= 0)
			return r;
		if (rec->kind == MI_REC_EXEC && !strcmp(rec->klass, "stopped"))
			return mi_stop_from_record(rec, ret_stop) ?: 1;
		mi_record_free(rec);
	}
}

/* Run an MI command whose single argument is quoted as a c-string. */
static int cmd_quoted(struct mi_driver *d, struct mi_record **ret, const char *cmd,
		      const char *arg)
{
	size_t n = mi_quote(NULL, 0, arg);
	char *q;
	int err;

	if (n >= MI_MAX_CMD)
		return -EINVAL;
	q = malloc(n + 1);
	if (!q)
		return -ENOMEM;
	mi_quote(q, n + 1, arg);
	err = mi_driver_cmd(d, ret, "%s %s", cmd, q);
	free(q);
	return err;
}

static int insert_break(struct mi_driver *d, const char *cmd, const char *location,
			struct mi_breakpoint *ret_bp)
{
	struct mi_record *rec;
	const struct mi_value *bp, *locs;
	long long v;
	int err;

	err = cmd_quoted(d, &rec, cmd, location);
	if (err)
		return err;
	bp = mi_get(rec->results, "bkpt");
	if (!bp || mi_get_int(bp, "number", &v) || v <= 0 || v > INT32_MAX) {
		mi_record_free(rec);
		mi_drv_set_error(d, "-break-insert: no breakpoint number in the answer");
		return -EBADMSG;
	}
	if (!ret_bp) {
		mi_record_free(rec);
		return 0;
	}
	memset(ret_bp, 0, sizeof(*ret_bp));
	ret_bp->rec = rec;
	ret_bp->number = v;
	ret_bp->pending = mi_get_str(bp, "pending") != NULL;
	ret_bp->func = mi_get_str(bp, "func");
	ret_bp->file = mi_get_str(bp, "file");
	ret_bp->line = get_small_int(bp, "line");
	mi_get_u64(bp, "addr", &ret_bp->addr);
	ret_bp->nlocations = 1;
	locs = mi_get(bp, "locations");
	if (locs && locs->kind == MI_LIST && locs->count) {
		/* addr="<MULTIPLE>": show the first location with a source line */
		ret_bp->nlocations = locs->count;
		for (const struct mi_value *l = locs->child; l && !ret_bp->file; l = l->next) {
			ret_bp->file = mi_get_str(l, "file");
			ret_bp->line = get_small_int(l, "line");
			ret_bp->func = mi_get_str(l, "func");
		}
	}
	return 0;
}

int mi_break(struct mi_driver *d, const char *location, struct mi_breakpoint *ret_bp)
{
	return insert_break(d, "-break-insert", location, ret_bp);
}

int mi_break_pending(struct mi_driver *d, const char *location, struct mi_breakpoint *ret_bp)
{
	return insert_break(d, "-break-insert -f", location, ret_bp);
}

void mi_breakpoint_release(struct mi_breakpoint *bp)
{
	if (!bp)
		return;
	mi_record_free(bp->rec);
	bp->rec = NULL;
}

int mi_run(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-run");
}

int mi_attach(struct mi_driver *d, pid_t pid)
{
	struct mi_stop stop;
	int err;

	d->attaching = true;
	err = mi_driver_cmd(d, NULL, "-target-attach %d", (int)pid);
	d->attaching = false;
	if (err)
		return err;
	d->owns_inferior = false;
	err = mi_wait_stop(d, d->cmd_timeout_ms, &stop);
	if (err == 0)
		return -ETIMEDOUT;
	if (err < 0)
		return err;
	mi_stop_release(&stop);
	return 0;
}

int mi_attach_send(struct mi_driver *d, pid_t pid, uint64_t *ret_token)
{
	int err = mi_driver_send(d, ret_token, "-target-attach %d", (int)pid);

	/* Until its answer, the inferior gdb reports is not one it started. */
	if (!err)
		d->attaching = true;
	return err;
}

int mi_attach_result(struct mi_driver *d, uint64_t token)
{
	struct mi_record *rec;
	int r = mi_driver_take_result(d, token, &rec);

	if (r == 0)
		return 0;
	d->attaching = false;
	if (r < 0)
		return r == -ENOENT ? -EINVAL : r;
	if (rec->rclass == MI_RC_ERROR) {
		const char *msg = mi_get_str(rec->results, "msg");

		mi_drv_set_error(d, "%s", msg ? msg : "error");
		mi_record_free(rec);
		return -EREMOTEIO;
	}
	mi_record_free(rec);
	d->owns_inferior = false;
	return 1;
}

int mi_continue(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-continue");
}

int mi_interrupt(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-interrupt");
}

int mi_step(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-step");
}

int mi_next(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-next");
}

int mi_finish(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-finish");
}

int mi_stepi(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-step-instruction");
}

int mi_nexti(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-next-instruction");
}

int mi_print(struct mi_driver *d, const char *expr, char **ret_value)
{
	struct mi_record *rec;
	const char *val;
	char *copy;
	int err;

	err = cmd_quoted(d, &rec, "-data-evaluate-expression", expr);
	if (err)
		return err;
	val = mi_get_str(rec->results, "value");
	copy = val ? strdup(val) : NULL;
	mi_record_free(rec);
	if (!val) {
		mi_drv_set_error(d, "-data-evaluate-expression: no value in the answer");
		return -EBADMSG;
	}
	if (!copy)
		return -ENOMEM;
	*ret_value = copy;
	return 0;
}

/*
 * Send cmd and find the list named key in its answer; allocate an array of
 * one elem_size element per list entry. On success the caller owns
 * *ret_rec and *ret_array.
 */
static int cmd_list(struct mi_driver *d, const char *cmd, const char *key, size_t elem_size,
		    struct mi_record **ret_rec, const struct mi_value **ret_list,
		    void **ret_array)
{
	const struct mi_value *list;
	struct mi_record *rec;
	void *array;
	int err;

	err = mi_driver_cmd(d, &rec, "%s", cmd);
	if (err)
		return err;
	list = mi_get(rec->results, key);
	if (!list || list->kind != MI_LIST) {
		mi_record_free(rec);
		mi_drv_set_error(d, "%s: no %s in the answer", cmd, key);
		return -EBADMSG;
	}
	array = calloc(list->count ? list->count : 1, elem_size);
	if (!array) {
		mi_record_free(rec);
		return -ENOMEM;
	}
	*ret_rec = rec;
	*ret_list = list;
	*ret_array = array;
	return 0;
}

int mi_backtrace(struct mi_driver *d, int max_depth, struct mi_frames *ret)
{
	const struct mi_value *stack, *f;
	struct mi_record *rec;
	struct mi_frame *frames;
	char cmd[64];
	size_t n = 0;
	int err;

	if (max_depth > 0)
		snprintf(cmd, sizeof(cmd), "-stack-list-frames 0 %d", max_depth - 1);
	else
		snprintf(cmd, sizeof(cmd), "-stack-list-frames");
	err = cmd_list(d, cmd, "stack", sizeof(*frames), &rec, &stack, (void **)&frames);
	if (err)
		return err;
	for (f = stack->child; f; f = f->next)
		frame_from(f, &frames[n++]);
	ret->n = n;
	ret->frames = frames;
	ret->rec = rec;
	return 0;
}

void mi_frames_release(struct mi_frames *f)
{
	if (!f)
		return;
	free(f->frames);
	mi_record_free(f->rec);
	*f = (struct mi_frames){ 0 };
}

int mi_thread_info(struct mi_driver *d, struct mi_threads *ret)
{
	const struct mi_value *list, *t;
	struct mi_thread *threads;
	struct mi_record *rec;
	size_t n = 0;
	int err;

	err = cmd_list(d, "-thread-info", "threads", sizeof(*threads), &rec, &list,
		       (void **)&threads);
	if (err)
		return err;
	for (t = list->child; t; t = t->next) {
		struct mi_thread *th = &threads[n++];

		th->id = get_small_int(t, "id");
		th->target_id = mi_get_str(t, "target-id");
		th->name = mi_get_str(t, "name");
		th->state = mi_get_str(t, "state");
		frame_from(mi_get(t, "frame"), &th->frame);
	}
	ret->n = n;
	ret->threads = threads;
	ret->current = get_small_int(rec->results, "current-thread-id");
	ret->rec = rec;
	return 0;
}

void mi_threads_release(struct mi_threads *t)
{
	if (!t)
		return;
	free(t->threads);
	mi_record_free(t->rec);
	*t = (struct mi_threads){ 0 };
}

int mi_detach(struct mi_driver *d)
{
	int err = mi_driver_cmd(d, NULL, "-target-detach");

	if (!err)
		mi_drv_forget_inferior(d);
	return err;
}
