// SPDX-License-Identifier: GPL-2.0
/*
 * A rank's MPI state as the GDB backend sees it (mpi-view.h). The state
 * is a plain struct in the rank; while the rank runs gdb cannot read it
 * (all-stop), so the backend reads the bytes through /proc/PID/mem and
 * keeps a copy only when the seqlock says it was not being written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crdbg/dbgproto.h"
#include "mpi-view.h"

#define MPIV_TRIES	64

/* Where crdbg_mpi_state is, from gdb (the rank stopped). */
static int find(struct mpiv *m, struct mi_driver *d)
{
	char *val = NULL;
	int err;

	if (m->absent)
		return -ENOENT;
	if (m->addr)
		return 0;
	err = mi_print(d, "(unsigned long)&" CRDBG_MPI_SYMBOL, &val);
	if (err == -EREMOTEIO) {
		m->absent = true;
		return -ENOENT;
	}
	if (err)
		return err;
	m->addr = strtoull(val, NULL, 0);
	free(val);
	return m->addr ? 0 : -ENOENT;
}

static int read_proc(pid_t pid, uint64_t addr, struct crdbg_mpi_state *ret)
{
	char path[64];
	int fd, rc = -EAGAIN;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < MPIV_TRIES; i++) {
		uint32_t seq;

		if (pread(fd, &seq, sizeof(seq), addr + offsetof(struct crdbg_mpi_state, seq))
		    != sizeof(seq) ||
		    pread(fd, ret, sizeof(*ret), addr) != sizeof(*ret)) {
			rc = -EIO;
			break;
		}
		if (!(seq & 1) && ret->seq == seq) {
			rc = 0;
			break;
		}
	}
	close(fd);
	return rc;
}

/* The same bytes through gdb (-data-read-memory-bytes), rank stopped. */
static int read_gdb(struct mi_driver *d, uint64_t addr, struct crdbg_mpi_state *ret)
{
	struct mi_record *rec;
	const char *hex;
	int err;

	err = mi_driver_cmd(d, &rec, "-data-read-memory-bytes --language c 0x%llx %zu",
			    (unsigned long long)addr, sizeof(*ret));
	if (err)
		return err;
	hex = mi_get_str(rec->results, "memory.0.contents");
	err = hex ? dbgp_hex_decode(ret, sizeof(*ret), hex, strlen(hex)) : -EBADMSG;
	mi_record_free(rec);
	return err;
}

int mpiv_read(struct mpiv *m, struct mi_driver *d, pid_t pid, bool stopped,
	      struct crdbg_mpi_state *ret)
{
	int err;

	if (!m->addr && !stopped)
		return m->absent ? -ENOENT : -EAGAIN;
	err = find(m, d);
	if (err)
		return err;
	err = pid > 0 ? read_proc(pid, m->addr, ret) : -ESRCH;
	if (err && err != -EAGAIN && stopped)
		err = read_gdb(d, m->addr, ret);
	if (!err && (ret->magic != CRDBG_MPI_MAGIC || ret->version != CRDBG_MPI_VERSION))
		err = -EPROTO;
	return err;
}

int mpiv_user_frame(const struct crdbg_mpi_state *st, const struct mi_frames *fr)
{
	if (st->kind == CRDBG_MPI_OUT || !st->ret)
		return -1;
	for (size_t i = 1; i < fr->n; i++) {
		if (fr->frames[i].addr != st->ret)
			continue;
		if (!fr->frames[i].line && i + 1 < fr->n && fr->frames[i + 1].line)
			return i + 1;
		return i;
	}
	return -1;
}

int mpiv_return(struct mpiv *m, struct mi_driver *d, pid_t pid)
{
	struct mi_record *rec;
	const char *num;
	struct crdbg_mpi_state st;
	struct mi_frames fr;
	uint64_t to;
	int err = mpiv_read(m, d, pid, true, &st), k;

	if (err)
		return err;
	if (st.kind == CRDBG_MPI_OUT || !st.ret)
		return -EINVAL;
	/* Back in the user's frame, past a binding of MPI's own between. */
	to = st.ret;
	if (!mi_driver_cmd(d, NULL, "-thread-select 1") && !mi_backtrace(d, 0, &fr)) {
		k = mpiv_user_frame(&st, &fr);
		if (k >= 0)
			to = fr.frames[k].addr;
		mi_frames_release(&fr);
	}
	mpiv_stopped(m, d, 0);
	err = mi_driver_cmd(d, &rec, "-break-insert --language c -t *0x%llx", (unsigned long long)to);
	if (err)
		return err;
	num = mi_get_str(rec->results, "bkpt.number");
	m->ret_bkpt = num ? atoi(num) : 0;
	mi_record_free(rec);
	return mi_continue(d);
}

void mpiv_stopped(struct mpiv *m, struct mi_driver *d, int bkptno)
{
	if (m->ret_bkpt && bkptno != m->ret_bkpt)
		mi_driver_cmd(d, NULL, "-break-delete %d", m->ret_bkpt);
	m->ret_bkpt = 0;
}

void mpiv_hex(char *buf, const struct crdbg_mpi_state *st)
{
	dbgp_hex_encode(buf, st, sizeof(*st));
}
