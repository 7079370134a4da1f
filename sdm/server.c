// SPDX-License-Identifier: GPL-2.0
/*
 * The SDM server program, over a table of backends: one server per node
 * (or per debugged process), driving the ranks the routing table gives
 * it. Usage:
 *   PROG [--advertise HOST] [--backend NAME] [--backend-args S] [HOST:]PORT
 * Its id comes from the environment (SDM_ID or a launcher's rank
 * variable); it binds at PORT or the next free port above, prints
 *   sdm-server ready id=I host=H port=P
 * on stdout, and waits for its parent (the master or another server) to
 * connect and send the initialization command.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sdm/auth.h"
#include "sdm/engine.h"
#include "sdm/message.h"
#include "sdm/server.h"
#include "node.h"
#include "startup.h"
#include "transport.h"

#define SERVER_INIT_TIMEOUT_S	300

struct server {
	struct sdm_node node;
	const struct sdm_backend_ops *backend;
	void *backend_priv;
};

static void usage(FILE *f, const char *prog,
		  const struct sdm_backend_ops *const *backends)
{
	fprintf(f, "usage: %s [--advertise HOST] [--backend NAME] "
		"[--backend-args ARGS] [HOST:]PORT\n  backends:", prog);
	for (int i = 0; backends[i]; i++)
		fprintf(f, " %s%s", backends[i]->name, i ? "" : " (default)");
	fprintf(f, "\n"
		"  the id comes from one of SDM_ID, OMPI_COMM_WORLD_RANK, "
		"PMI_RANK, PMIX_RANK, SLURM_PROCID\n"
		"  the session secret from SDM_SECRET_FILE or SDM_SECRET\n");
}

static void backend_reply(void *arg, uint32_t req,
			  const struct sdm_idset *ranks, int error,
			  const void *buf, size_t len)
{
	sdm_node_local_reply(arg, req, ranks, error, buf, len);
}

static void backend_output(void *arg, sdm_id rank, int stream,
			   const void *buf, size_t len)
{
	sdm_node_local_output(arg, rank, stream, buf, len);
}

static int deliver(struct sdm_node *n, const struct sdm_message *m,
		   const struct sdm_idset *ranks)
{
	struct server *s = n->priv;

	return s->backend->command(s->backend_priv, m->agg.id, ranks,
				   m->payload, m->len);
}

static void deliver_iof(struct sdm_node *n, const void *buf, size_t len)
{
	int rc = sdm_iof_stdin_write(buf, len);

	if (rc < 0)
		fprintf(stderr, "sdm-server %u: stdin dropped: %s\n", n->id,
			strerror(-rc));
}

/* sdm_iof's output: the program of this server's first rank. */
static void iof_sink(void *arg, int stream, const void *buf, size_t len)
{
	struct sdm_node *n = arg;
	sdm_id rank = n->id;

	if (n->rr.own)
		sdm_set_find_next(n->rr.own, 0, &rank);
	sdm_node_local_output(n, rank, stream, buf, len);
}

/* Nobody initialised us (the front end died during startup): do not linger. */
static void init_timeout(void *arg)
{
	struct sdm_node *n = arg;

	if (n->initialised)
		return;
	fprintf(stderr, "sdm-server %u: no initialization command within %d s, "
		"exiting\n", n->id, SERVER_INIT_TIMEOUT_S);
	n->quit = true;
}

/*
 * The launcher's stdin, which carried the secret (SDM_SECRET_STDIN): the
 * front end holds its other end open for the session, so its end means
 * the front end is gone or done. A remote server has no other sign of
 * that before its tree connects.
 */
static void launcher_stdin(void *arg, int fd, uint32_t events)
{
	struct sdm_node *n = arg;
	char buf[64];
	ssize_t r = read(fd, buf, sizeof(buf));

	(void)events;
	if (r > 0 || (r < 0 && errno == EINTR))
		return;		/* nothing else is sent: ignore */
	sdm_transport_unwatch_fd(n->t, fd);
	close(fd);
	if (!n->initialised) {
		fprintf(stderr, "sdm-server %u: the front end is gone, exiting\n",
			n->id);
		n->quit = true;
	}
}

/*
 * Started by srun on a compute node: advertise the address this node
 * reaches the login node from (srun names its own address in
 * SLURM_LAUNCH_NODE_IPADDR), which the tree can connect to even where the
 * node's name does not resolve. Connecting a UDP socket sends nothing.
 */
static int advertise_slurm(char *buf, size_t size)
{
	const char *peer = getenv("SLURM_LAUNCH_NODE_IPADDR");
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9) };
	socklen_t len = sizeof(sin);
	int fd, rc = -ENOENT;

	if (!peer || inet_pton(AF_INET, peer, &sin.sin_addr) != 1)
		return -ENOENT;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0 &&
	    inet_ntop(AF_INET, &sin.sin_addr, buf, size))
		rc = 0;
	close(fd);
	return rc;
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/*
 * The address to listen on when none was given: the one advertised, so
 * that the server is reached only where its parent looks for it. Every
 * address ("") when the name does not resolve, or resolves to a loopback
 * address though it is no loopback name itself (Debian's 127.0.1.1 for
 * the host's own name), since peers on other nodes resolve it otherwise.
 */
static void bind_host_for(const char *adv, char *buf, size_t size)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *lit;
	bool literal;

	buf[0] = '\0';
	hints.ai_flags = AI_NUMERICHOST;
	literal = getaddrinfo(adv, NULL, &hints, &lit) == 0;
	if (literal)
		freeaddrinfo(lit);
	hints.ai_flags = 0;
	if (getaddrinfo(adv, NULL, &hints, &res))
		return;
	if (!is_loopback(res->ai_addr) || literal || !strcmp(adv, "localhost"))
		getnameinfo(res->ai_addr, res->ai_addrlen, buf, size, NULL, 0,
			    NI_NUMERICHOST);
	freeaddrinfo(res);
}

static const struct sdm_backend_ops *
find_backend(const struct sdm_backend_ops *const *backends, const char *name)
{
	for (int i = 0; backends[i]; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

int sdm_server_main(int argc, char **argv,
		    const struct sdm_backend_ops *const *backends)
{
	static const struct option opts[] = {
		{ "advertise", required_argument, NULL, 'a' },
		{ "backend", required_argument, NULL, 'b' },
		{ "backend-args", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *advertise = NULL, *backend = backends[0]->name, *bargs = "";
	char host[SDM_STARTUP_HOST_MAX], adv[SDM_STARTUP_HOST_MAX], why[256];
	struct sdm_backend_host bh;
	int stdin_fd = -1;
	struct server s = { 0 };
	const char *var;
	sdm_id id;
	int c, rc, port, bound;
	bool explicit_host;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': advertise = optarg; break;
		case 'b': backend = optarg; break;
		case 'B': bargs = optarg; break;
		case 'h': usage(stdout, argv[0], backends); return 0;
		default: usage(stderr, argv[0], backends); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr, argv[0], backends);
		return 2;
	}
	explicit_host = strchr(argv[optind], ':');
	if (explicit_host) {
		rc = sdm_startup_parse_hostport(argv[optind], host,
						sizeof(host), &port);
	} else {
		char tmp[40];

		/* the host comes from the advertised name, below */
		snprintf(tmp, sizeof(tmp), "0.0.0.0:%.30s", argv[optind]);
		rc = sdm_startup_parse_hostport(tmp, host, sizeof(host), &port);
		host[0] = '\0';
	}
	if (rc < 0) {
		fprintf(stderr, "sdm-server: bad port '%s' (want [HOST:]PORT)\n",
			argv[optind]);
		return 2;
	}
	rc = sdm_startup_id_from_env(&id, &var);
	if (rc < 0) {
		fprintf(stderr, "sdm-server: %s; set SDM_ID or start me with "
			"mpirun/srun\n", rc == -ENOENT ?
			"no server id in the environment" :
			"the server id in the environment is not a number");
		return 2;
	}
	s.backend = find_backend(backends, backend);
	if (!s.backend) {
		fprintf(stderr, "sdm-server: unknown backend '%s'\n", backend);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);	/* reap spawned programs */
	/* The secret's pipe, kept past the read that takes the secret. */
	if (getenv(SDM_AUTH_ENV_STDIN) && !strcmp(getenv(SDM_AUTH_ENV_STDIN), "1"))
		stdin_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	rc = sdm_node_init(&s.node, id, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "sdm-server %u: %s\n", id, why);
		return rc == -EINVAL ? 2 : 1;
	}
	s.node.priv = &s;
	s.node.deliver = deliver;
	s.node.deliver_iof = deliver_iof;
	if (advertise)
		snprintf(adv, sizeof(adv), "%s", advertise);
	else if (advertise_slurm(adv, sizeof(adv)) < 0 &&
		 gethostname(adv, sizeof(adv)) < 0)
		snprintf(adv, sizeof(adv), "127.0.0.1");
	if (!host[0])
		bind_host_for(adv, host, sizeof(host));
	rc = sdm_transport_listen(s.node.t, host, port, SDM_STARTUP_BIND_SPAN,
				  &bound);
	if (rc == -EADDRNOTAVAIL && !explicit_host) {
		/* advertised under an address that is not this host's (NAT) */
		host[0] = '\0';
		rc = sdm_transport_listen(s.node.t, host, port,
					  SDM_STARTUP_BIND_SPAN, &bound);
	}
	if (rc < 0) {
		fprintf(stderr, "sdm-server %u: cannot bind a port from %d%s%s: %s\n",
			id, port, host[0] ? " on " : "", host, strerror(-rc));
		return 1;
	}
	sdm_iof_init(s.node.t, iof_sink, &s.node);
	bh = (struct sdm_backend_host){
		.engine = s.node.t, .id = id, .reply = backend_reply,
		.output = backend_output, .arg = &s.node,
	};
	rc = s.backend->start(&bh, bargs, &s.backend_priv);
	if (rc < 0) {
		fprintf(stderr, "sdm-server %u: backend %s: %s\n", id, backend,
			strerror(-rc));
		return 1;
	}
	/* One write, so lines from many servers on one pipe never mix. */
	{
		char line[160];
		int n = snprintf(line, sizeof(line), SDM_STARTUP_READY_FMT "\n",
				 id, adv, bound);

		if (write(STDOUT_FILENO, line, n) != n) {
			fprintf(stderr, "sdm-server %u: cannot announce: %s\n",
				id, strerror(errno));
			return 1;
		}
	}
	sdm_transport_add_timer(s.node.t, SERVER_INIT_TIMEOUT_S * 1000,
				init_timeout, &s.node);
	if (stdin_fd >= 0 &&
	    sdm_transport_watch_fd(s.node.t, stdin_fd, EPOLLIN, launcher_stdin,
				   &s.node) < 0)
		close(stdin_fd);
	rc = sdm_node_run(&s.node);
	s.backend->stop(s.backend_priv);
	sdm_iof_finalize();
	sdm_node_finalize(&s.node);
	return rc;
}
