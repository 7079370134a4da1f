// SPDX-License-Identifier: GPL-2.0
/*
 * The reset guard of a job restart. A part restored before its peer on
 * another node holds TCP connections whose other end does not exist yet:
 * its first retransmission reaches the peer's node, whose kernel answers
 * with a reset, and the connection is lost before the job is released.
 * CRIU's own network lock does not cover this: it locks a connection at
 * the dump and unlocks it at the end of the dump (--leave-running) or of
 * the first restore, never across the parts of a job, nor for a second
 * restart of one checkpoint.
 *
 * So every part drops the outgoing TCP resets of its node's network
 * namespace from before it reports "verified" (before any part of the
 * job restores anything) until the release (when every part is back):
 * a segment that reaches a socket not yet restored goes unanswered and is
 * sent again later, when the socket is there. An nftables table of its
 * own, through libnftables (the library Debian's CRIU locks with), named
 * after the part's pid, removed at the release or the abort; a table
 * whose part is gone (killed before either) is removed by the next
 * part's guard on the node.
 *
 * Only the kernel's answer to a segment that carries an ACK for a socket
 * it does not have is dropped: a bare RST (its sequence number is that
 * ACK, and it carries no ACK of its own). A refused connect is answered
 * with RST|ACK (the SYN carries no ACK), and so is a live socket's abort:
 * those still go, so the node's other traffic is not held meanwhile:
 * with every reset dropped a refused connect waits for its timeout, and
 * in the clusterjob guest group the srun step of a node's second part
 * then stood in slurmstepd, crdbg never started, past the barrier's
 * timeout.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <crdbg/job.h>

struct nft_ctx;

struct nft_api {
	struct nft_ctx *(*ctx_new)(unsigned int flags);
	int (*run)(struct nft_ctx *ctx, const char *buf);
	void (*ctx_free)(struct nft_ctx *ctx);
	int (*buffer_error)(struct nft_ctx *ctx);
	const char *(*get_error)(struct nft_ctx *ctx);
	int (*buffer_output)(struct nft_ctx *ctx);
	const char *(*get_output)(struct nft_ctx *ctx);
	void (*set_output_flags)(struct nft_ctx *ctx, unsigned int flags);
};

#define NFT_CTX_OUTPUT_JSON	(1 << 4)	/* libnftables' enum nft_output_flags */

/*
 * cmd through libnftables; with fn, its JSON output is handed to fn.
 * 0, or -1 with err set.
 */
static int nft_run(const char *cmd, void (*fn)(const char *json, void *arg), void *arg,
		   char *err, size_t errlen)
{
	struct nft_api a;
	struct nft_ctx *ctx;
	void *h = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
	int r;

	if (!h) {
		snprintf(err, errlen, "libnftables.so.1 not found (Debian: libnftables1)");
		return -1;
	}
	a.ctx_new = (struct nft_ctx *(*)(unsigned int))dlsym(h, "nft_ctx_new");
	a.run = (int (*)(struct nft_ctx *, const char *))dlsym(h, "nft_run_cmd_from_buffer");
	a.ctx_free = (void (*)(struct nft_ctx *))dlsym(h, "nft_ctx_free");
	a.buffer_error = (int (*)(struct nft_ctx *))dlsym(h, "nft_ctx_buffer_error");
	a.get_error = (const char *(*)(struct nft_ctx *))dlsym(h, "nft_ctx_get_error_buffer");
	a.buffer_output = (int (*)(struct nft_ctx *))dlsym(h, "nft_ctx_buffer_output");
	a.get_output = (const char *(*)(struct nft_ctx *))dlsym(h, "nft_ctx_get_output_buffer");
	a.set_output_flags = (void (*)(struct nft_ctx *, unsigned int))dlsym(h,
									 "nft_ctx_output_set_flags");
	if (!a.ctx_new || !a.run || !a.ctx_free || !a.buffer_error || !a.get_error ||
	    !a.buffer_output || !a.get_output || !a.set_output_flags) {
		snprintf(err, errlen, "libnftables.so.1 lacks nft_run_cmd_from_buffer");
		dlclose(h);
		return -1;
	}
	ctx = a.ctx_new(0);
	if (!ctx) {
		snprintf(err, errlen, "nft_ctx_new failed");
		dlclose(h);
		return -1;
	}
	a.buffer_error(ctx);
	if (fn) {
		a.set_output_flags(ctx, NFT_CTX_OUTPUT_JSON);
		a.buffer_output(ctx);
	}
	r = a.run(ctx, cmd);
	if (r)
		snprintf(err, errlen, "nftables: %s", a.get_error(ctx));
	else if (fn)
		fn(a.get_output(ctx), arg);
	a.ctx_free(ctx);
	dlclose(h);
	return r ? -1 : 0;
}

#define GUARD_TABLE "crdbg-rst-"

/*
 * The guard tables of parts that are gone (a part killed before its
 * release or abort): each would drop the node's resets for good. Found
 * in `list tables`'s JSON, each "name" of ours whose pid no longer runs.
 */
static void sweep_gone(const char *json, void *arg)
{
	static const char key[] = "\"name\": \"" GUARD_TABLE;
	const char *p = json;

	(void)arg;
	while (p && (p = strstr(p, key))) {
		char cmd[128], err[256], *end;
		long pid;

		p += sizeof(key) - 1;
		pid = strtol(p, &end, 10);
		if (end == p || *end != '"' || pid <= 0 || pid == getpid() ||
		    !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		snprintf(cmd, sizeof(cmd), "delete table inet " GUARD_TABLE "%ld\n", pid);
		nft_run(cmd, NULL, NULL, err, sizeof(err));
	}
}

/* Does the checkpoint hold TCP connections (CRIU's tcp-stream images)? */
static bool holds_tcp(const char *root, const char *handle)
{
	char dir[4096];
	struct dirent *de;
	bool tcp = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", root, handle);
	d = opendir(dir);
	if (!d)
		return false;
	while (!tcp && (de = readdir(d)))
		tcp = !strncmp(de->d_name, "tcp-stream-", 11);
	closedir(d);
	return tcp;
}

int crs_job_rst_guard(const char *root, const char *handle, bool *guarded, char *err,
		      size_t errlen)
{
	char cmd[512];
	int pid = (int)getpid();

	*guarded = false;
	if (!holds_tcp(root, handle))
		return 0;
	nft_run("list tables inet\n", sweep_gone, NULL, err, errlen);
	snprintf(cmd, sizeof(cmd),
		 "add table inet " GUARD_TABLE "%d\n"
		 "add chain inet " GUARD_TABLE "%d out { type filter hook output priority 0 ; policy accept ; }\n"
		 "add rule inet " GUARD_TABLE "%d out tcp flags & (rst | ack) == rst drop\n",
		 pid, pid, pid);
	if (nft_run(cmd, NULL, NULL, err, errlen))
		return -1;
	*guarded = true;
	return 0;
}

void crs_job_rst_unguard(void)
{
	char cmd[128], err[256];

	snprintf(cmd, sizeof(cmd), "delete table inet " GUARD_TABLE "%d\n", (int)getpid());
	nft_run(cmd, NULL, NULL, err, sizeof(err));
}
