// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark: what a frame's tag costs (sdm/link.h). For several message
 * sizes, side by side in one run:
 *  - the receiver's framing without a tag (header decode and the copy
 *    out of the receive buffer that the transport does for every frame);
 *  - the same with the tag: seal at the sender, check at the receiver;
 *  - messages per second one way over a loopback link of two transports
 *    in this process (tagged, as every link is), and the share of that
 *    time the tag takes.
 * Prints a Markdown section for Documentation/performance.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "sdm/auth.h"
#include "sdm/engine.h"
#include "sdm/link.h"
#include "sdm/message.h"
#include "startup.h"
#include "transport.h"

#define MIN_SECONDS	0.3
#define LINK_MESSAGES	20000
#define LINK_BYTES	(256u << 20)

static const size_t sizes[] = { 16, 256, 4096, 65536, 1u << 20 };

/* CPU time of this process: both ends run here, and the machine is shared. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *frame_of(size_t payload, size_t *ret_len)
{
	void *p = calloc(1, payload ? payload : 1), *buf = NULL;
	struct sdm_message *m = p ? sdm_message_new(SDM_MSG_IOF, p, payload) : NULL;

	if (!m || sdm_message_encode_alloc(m, &buf, ret_len) < 0)
		exit(1);
	sdm_message_free(m);
	free(p);
	return buf;
}

static void keys(struct sdm_link *tx, struct sdm_link *rx)
{
	struct sdm_auth_secret s;
	uint8_t na[SDM_AUTH_NONCE_LEN], nc[SDM_AUTH_NONCE_LEN];

	if (sdm_auth_secret_generate(&s) ||
	    getrandom(na, sizeof(na), 0) != sizeof(na) ||
	    getrandom(nc, sizeof(nc), 0) != sizeof(nc) ||
	    sdm_link_init(tx, &s, SDM_AUTH_CONNECTOR, nc, na) ||
	    sdm_link_init(rx, &s, SDM_AUTH_ACCEPTOR, na, nc))
		exit(1);
}

/* ns per frame of the framing alone, and with seal + open. */
static void per_frame(size_t payload, double *ret_plain, double *ret_tagged)
{
	size_t len, n = 0, flen;
	uint8_t *f = frame_of(payload, &len);
	uint8_t *wire = malloc(len + SDM_LINK_TAG_LEN), *out = malloc(len);
	struct sdm_frame_hdr h;
	struct sdm_link tx, rx;
	double t0, t;

	if (!wire || !out)
		exit(1);
	keys(&tx, &rx);
	memcpy(wire, f, len);
	t0 = now();
	do {
		for (int i = 0; i < 64; i++, n++) {
			if (sdm_frame_header_decode(wire, len, &h))
				exit(1);
			memcpy(out, wire, SDM_FRAME_HDR_LEN + h.body_len);
		}
	} while ((t = now() - t0) < MIN_SECONDS);
	*ret_plain = t * 1e9 / n;
	n = 0;
	t0 = now();
	do {
		for (int i = 0; i < 16; i++, n++) {
			if (sdm_link_seal(&tx, f, len, wire + len) ||
			    sdm_link_open(&rx, wire, len + SDM_LINK_TAG_LEN, 0, &h, &flen))
				exit(1);
			memcpy(out, wire, flen);
		}
	} while ((t = now() - t0) < MIN_SECONDS);
	*ret_tagged = t * 1e9 / n;
	sdm_link_free(&tx);
	sdm_link_free(&rx);
	free(f);
	free(wire);
	free(out);
}

struct end {
	bool connected;
	int peer;
	unsigned long frames;
};

static void end_connected(void *arg, int peer, int id, bool incoming)
{
	struct end *e = arg;

	(void)id;
	(void)incoming;
	e->connected = true;
	e->peer = peer;
}

static void end_frame(void *arg, int peer, const void *buf, size_t len)
{
	(void)peer;
	(void)buf;
	(void)len;
	((struct end *)arg)->frames++;
}

/* Messages per CPU second (both ends and the kernel's work for them) from a to b. */
static double link_rate(size_t payload)
{
	struct sdm_transport_config c = { 0 }, d;
	struct sdm_auth_secret s;
	struct end a = { 0 }, b = { 0 };
	struct sdm_transport *ta, *tb;
	unsigned long want = LINK_MESSAGES, sent = 0;
	size_t len;
	void *f = frame_of(payload, &len);
	double t0, t;
	int port;

	if (want * len > LINK_BYTES)
		want = LINK_BYTES / len;
	if (sdm_auth_secret_generate(&s) || sdm_startup_transport_defaults(&c, NULL, 0))
		exit(1);
	c.secret = &s;
	c.connected = end_connected;
	c.frame = end_frame;
	d = c;
	c.my_id = 1;
	c.arg = &a;
	d.my_id = 2;
	d.arg = &b;
	ta = sdm_transport_new(NULL, &c);
	tb = sdm_transport_new(NULL, &d);
	if (!ta || !tb || sdm_transport_listen(tb, "127.0.0.1", 0, 1, &port) ||
	    sdm_transport_connect(ta, "127.0.0.1", port, 2) < 0)
		exit(1);
	while (!a.connected || !b.connected) {
		sdm_transport_progress(ta, 1);
		sdm_transport_progress(tb, 1);
	}
	t0 = now();
	while (b.frames < want) {
		while (sent < want && sdm_transport_queued(ta, a.peer) < (4u << 20) &&
		       sdm_transport_send(ta, a.peer, f, len) == 0)
			sent++;
		sdm_transport_progress(ta, 0);
		sdm_transport_progress(tb, 1);
	}
	t = now() - t0;
	sdm_transport_free(ta);
	sdm_transport_free(tb);
	free(f);
	return want / t;
}

static void size_name(size_t n, char *buf, size_t len)
{
	if (n >= 1u << 20)
		snprintf(buf, len, "%zu MiB", n >> 20);
	else if (n >= 1024)
		snprintf(buf, len, "%zu KiB", n >> 10);
	else
		snprintf(buf, len, "%zu B", n);
}

#define GOAL_PAYLOAD	256
#define GOAL_RATE	100000	/* messages per CPU second */

int main(void)
{
	double goal_rate = 0;

	printf("## SDM: the cost of a frame's tag\n\n");
	printf("`sdm/bench_link`: HMAC-SHA-256 tags (sdm/link.h) on `IOF` messages of each payload size, "
	       "side by side in one run. Framing: the receiver's header decode and copy of a frame "
	       "without a tag; tagged: the same plus the sender's seal and the receiver's check "
	       "(ns of CPU per frame, over %.1f s of CPU). Link: messages per CPU second (this "
	       "process: both ends and the kernel's work on their behalf) one way over loopback "
	       "between two transports in one process, every frame tagged; the tag's share is "
	       "the tag's own cost (tagged minus framing) over the CPU time per message. All "
	       "times are CPU time, which other work on a shared machine does not inflate.\n\n",
	       MIN_SECONDS);
	printf("| payload | framing ns/frame | tagged ns/frame | tag MB/s | link msgs/CPU s | link MB/CPU s | tag's share of a message's CPU time |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double plain, tagged, rate;
		char name[32];

		per_frame(sizes[i], &plain, &tagged);
		rate = link_rate(sizes[i]);
		if (sizes[i] == GOAL_PAYLOAD)
			goal_rate = rate;
		size_name(sizes[i], name, sizeof(name));
		printf("| %s | %.0f | %.0f | %.0f | %.0f | %.1f | %.0f%% |\n", name, plain, tagged,
		       sizes[i] / tagged * 1e3, rate, rate * sizes[i] / 1e6,
		       100.0 * (tagged - plain) * rate / 1e9);
	}
	printf("\nGoal: a tagged link carries at least %d messages of %d bytes per CPU second: "
	       "**%s** (%.0f).\n", GOAL_RATE, GOAL_PAYLOAD,
	       goal_rate >= GOAL_RATE ? "met" : "NOT met", goal_rate);
	printf("\nMeasured on the host (%ld CPUs).\n", sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}
