// SPDX-License-Identifier: GPL-2.0
/*
 * A unix datagram socket connected to a peer outside the checkpointed
 * tree: CRIU 3.17 dumps it only with --ext-unix-sk ("External socket is
 * used"), an option crdbg does not choose by itself. The test passes it to
 * `crdbg checkpoint --criu-opt` and checks that the metadata records it
 * (the restart gives recorded options to criu restore; CRIU's restore
 * source checks the option too, but here restored this socket without
 * it, measured on 2026-11-25).
 *
 *   prog_ext_unix DIR peer   the peer (the test starts it, never
 *                            checkpointed): binds DIR/peer.sock and reads
 *                            datagrams until killed; each "after" that
 *                            follows a "before" writes DIR/peer-result
 *                            "pass" (anything else: "fail: ...").
 *   prog_ext_unix DIR        the program: connects an unbound datagram
 *                            socket to DIR/peer.sock, sends "before";
 *                            after the word checks the socket is still
 *                            connected there and sends "after".
 */
#include <sys/socket.h>
#include <sys/un.h>

#include "fidelity.h"

static void peer_result(const char *what)
{
	char tmp[4096];
	FILE *f = fopen(fid_path("peer-result.tmp"), "we");

	if (!f)
		return;
	fprintf(f, "%s\n", what);
	fclose(f);
	snprintf(tmp, sizeof(tmp), "%s", fid_path("peer-result.tmp"));
	rename(tmp, fid_path("peer-result"));
}

static void peer(struct sockaddr_un *a)
{
	bool before = false;
	char buf[64], why[128];
	ssize_t n;
	int s;

	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (s < 0 || bind(s, (void *)a, sizeof(*a)))
		fid_die("peer: bind %s: %s", a->sun_path, strerror(errno));
	for (;;) {
		n = recv(s, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fid_die("peer: recv: %s", strerror(errno));
		}
		buf[n] = '\0';
		if (!strcmp(buf, "before")) {
			before = true;
		} else if (!strcmp(buf, "after") && before) {
			peer_result("pass");
		} else {
			snprintf(why, sizeof(why), "fail: peer got '%s'%s", buf,
				 before ? "" : " before 'before'");
			peer_result(why);
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX }, got;
	socklen_t len = sizeof(got);
	int s, type = 0;
	socklen_t tlen = sizeof(type);

	fid_init(argc, argv);
	if (strlen(fid_path("peer.sock")) >= sizeof(a.sun_path))
		fid_die("%s: path too long for a unix socket", fid_path("peer.sock"));
	strcpy(a.sun_path, fid_path("peer.sock"));
	if (argc > 2 && !strcmp(argv[2], "peer"))
		peer(&a);
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (s < 0 || connect(s, (void *)&a, sizeof(a)) || send(s, "before", 6, 0) != 6)
		fid_die("connect/send to %s: %s", a.sun_path, strerror(errno));
	fid_ready_wait();

	memset(&got, 0, sizeof(got));
	FID_CHECK(getpeername(s, (void *)&got, &len) == 0 && got.sun_family == AF_UNIX &&
		  !strcmp(got.sun_path, a.sun_path),
		  "peer name '%s', want '%s' (%s)", got.sun_path, a.sun_path, strerror(errno));
	FID_CHECK(getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 && type == SOCK_DGRAM,
		  "socket type %d, want datagram", type);
	FID_CHECK(send(s, "after", 5, 0) == 5, "send after the restore: %s", strerror(errno));
	fid_finish();
}
