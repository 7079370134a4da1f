// SPDX-License-Identifier: GPL-2.0
/*
 * The job of the multi-node checkpoint tests: N tasks in a TCP ring, each
 * connected to the next across nodes, exchanging a message every
 * iteration. No MPI (srun --mpi=none): an MPI rank's PMIx connection to
 * its slurmstepd is one CRIU cannot take, plain TCP between nodes is what
 * a job checkpoint must carry.
 *
 *   prog_ring ITERS WAIT_AT ADDR0 ADDR1 ... ADDR(N-1)
 *
 * The rank is SLURM_PROCID (or RING_RANK); ADDRk is the IPv4 address of
 * rank k's node; rank k listens on port RING_PORT + k (default 7300 + k),
 * connects to rank k+1 and accepts rank k-1. In iteration i every rank
 * sends its value to the next and receives the previous one's, then mixes
 * the two (ring_step(): a place for a debugger's breakpoint):
 *
 *   "ring rank R of N on HOST"      once the ring is connected
 *   "wait I"                        with RING_GO set, in iteration WAIT_AT
 *                                   between the send and the receive (the
 *                                   message is in flight, in the sockets),
 *                                   until the file $RING_GO exists
 *   "iter I from P got X value V"   after each exchange
 *   "done rank R value V"           at the end, exit 0
 *
 * The output depends only on N and ITERS, so a job restarted from a
 * checkpoint prints what an uninterrupted run prints. A lost peer (EOF, a
 * reset) ends the task with "ring broken: ..." on stderr and exit 3; so
 * does, with RING_TIMEOUT=S, no message for S seconds (a peer whose node
 * vanished sends no reset: without it the ring would wait for ever).
 * With RING_OUT=PREFIX the task writes its stdout to PREFIX.R.out itself
 * (under a debugger srun launches it directly, and a restarted task no
 * longer has srun's pipes); stderr stays where it was (a debugger reads
 * libcrdbg's "MPIR debug info)" lines there).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CONNECT_TRIES 1200	/* 50 ms apart: a peer may start a minute late */

struct msg {
	uint64_t iter;
	uint64_t value;
};

static int rank, size;
static int timeout_ms = -1;

static void broken(const char *what, uint64_t iter)
{
	fprintf(stderr, "ring broken: rank %d iteration %llu: %s: %s\n", rank,
		(unsigned long long)iter, what, errno ? strerror(errno) : "peer closed");
	exit(3);
}

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int port_of(int r)
{
	const char *p = getenv("RING_PORT");

	return (p ? atoi(p) : 7300) + r;
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		broken("socket", 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4))
		broken("listen", 0);
	return fd;
}

static int connect_to(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1;

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		fprintf(stderr, "prog_ring: \"%s\" is not an IPv4 address\n", addr);
		exit(2);
	}
	for (int i = 0; i < CONNECT_TRIES; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			broken("socket", 0);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		nap_ms(50);
	}
	broken("connect to the next rank", 0);
	return -1;
}

static void send_all(int fd, const void *buf, size_t len, uint64_t iter)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			broken("send", iter);
		p += n;
		len -= (size_t)n;
	}
}

static void recv_all(int fd, void *buf, size_t len, uint64_t iter)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) == 0) {
			errno = ETIMEDOUT;
			broken("receive", iter);
		}
		n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = 0;
			broken("receive", iter);
		}
		p += n;
		len -= (size_t)n;
	}
}

/* One iteration's arithmetic: the new value from the own and the received. */
__attribute__((noinline)) uint64_t ring_step(uint64_t iter, uint64_t mine, uint64_t got)
{
	uint64_t v = mine * 6364136223846793005ull + got + iter;

	return v ^ (v >> 29);
}

/* RING_OUT=PREFIX: stdout to PREFIX.RANK.out. */
static void output_to_file(const char *prefix)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.%d.out", prefix, rank);
	if (!freopen(path, "w", stdout))
		broken(path, 0);
}

static void wait_go(const char *go, uint64_t iter)
{
	printf("wait %llu\n", (unsigned long long)iter);
	fflush(stdout);
	while (access(go, F_OK))
		nap_ms(20);
}

int main(int argc, char **argv)
{
	const char *go = getenv("RING_GO"), *r = getenv("SLURM_PROCID");
	uint64_t iters, wait_at, value;
	char host[256] = "";
	int lfd, next, prev;

	if (!r)
		r = getenv("RING_RANK");
	if (argc < 4 || !r) {
		fprintf(stderr, "usage: prog_ring ITERS WAIT_AT ADDR0 ADDR1 ... (rank from SLURM_PROCID or RING_RANK)\n");
		return 2;
	}
	iters = strtoull(argv[1], NULL, 10);
	wait_at = strtoull(argv[2], NULL, 10);
	size = argc - 3;
	rank = atoi(r);
	if (rank < 0 || rank >= size) {
		fprintf(stderr, "prog_ring: rank %d, but %d addresses\n", rank, size);
		return 2;
	}
	if (getenv("RING_OUT"))
		output_to_file(getenv("RING_OUT"));
	signal(SIGPIPE, SIG_IGN);
	if (getenv("RING_TIMEOUT"))
		timeout_ms = atoi(getenv("RING_TIMEOUT")) * 1000;
	lfd = listen_on(port_of(rank));
	next = connect_to(argv[3 + (rank + 1) % size], port_of((rank + 1) % size));
	prev = accept(lfd, NULL, NULL);
	if (prev < 0)
		broken("accept from the previous rank", 0);
	gethostname(host, sizeof(host) - 1);
	printf("ring rank %d of %d on %s\n", rank, size, host);
	fflush(stdout);
	value = (uint64_t)rank + 1;
	for (uint64_t i = 1; i <= iters; i++) {
		struct msg out = { .iter = i, .value = value }, in;

		send_all(next, &out, sizeof(out), i);
		if (go && i == wait_at)
			wait_go(go, i);
		recv_all(prev, &in, sizeof(in), i);
		if (in.iter != i) {
			errno = EPROTO;
			broken("message out of step", i);
		}
		value = ring_step(i, value, in.value);
		printf("iter %llu from %d got %llx value %llx\n", (unsigned long long)i,
		       (rank + size - 1) % size, (unsigned long long)in.value,
		       (unsigned long long)value);
		fflush(stdout);
	}
	/* RING_CHATTY=N: N lines on stderr before the end (more than a pipe holds). */
	for (int i = 0; getenv("RING_CHATTY") && i < atoi(getenv("RING_CHATTY")); i++)
		fprintf(stderr, "chatter rank %d line %d\n", rank, i);
	printf("done rank %d value %llx\n", rank, (unsigned long long)value);
	return 0;
}
