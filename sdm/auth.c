// SPDX-License-Identifier: GPL-2.0
/*
 * Per-session secret and HMAC-SHA256 challenge-response (see
 * sdm/include/sdm/auth.h and Documentation/sdm.md, "Authentication").
 * HMAC comes from OpenSSL's libcrypto; nonces and secrets from
 * getrandom(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sdm/auth.h"

#define AUTH_LABEL	"crdbg-sdm-auth-v1"
#define HEX_LEN		(2 * SDM_AUTH_SECRET_LEN)
#define STDIN_SECRET_WAIT_MS	30000

static int fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int sdm_auth_secret_generate(struct sdm_auth_secret *ret)
{
	return fill_random(ret->key, sizeof(ret->key));
}

void sdm_auth_secret_wipe(struct sdm_auth_secret *s)
{
	explicit_bzero(s->key, sizeof(s->key));
}

void sdm_auth_secret_to_hex(const struct sdm_auth_secret *s, char *buf)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < SDM_AUTH_SECRET_LEN; i++) {
		buf[2 * i] = digits[s->key[i] >> 4];
		buf[2 * i + 1] = digits[s->key[i] & 15];
	}
	buf[HEX_LEN] = '\0';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sdm_auth_secret_from_hex(struct sdm_auth_secret *ret, const char *hex)
{
	struct sdm_auth_secret s;

	for (size_t i = 0; i < SDM_AUTH_SECRET_LEN; i++) {
		int hi = hex_value(hex[2 * i]), lo;

		if (hi < 0)
			return -EBADMSG;
		lo = hex_value(hex[2 * i + 1]);
		if (lo < 0)
			return -EBADMSG;
		s.key[i] = hi << 4 | lo;
	}
	if (strcmp(hex + HEX_LEN, "") && strcmp(hex + HEX_LEN, "\n"))
		return -EBADMSG;
	*ret = s;
	sdm_auth_secret_wipe(&s);
	return 0;
}

int sdm_auth_secret_save(const struct sdm_auth_secret *s, const char *path)
{
	char buf[HEX_LEN + 2];
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	sdm_auth_secret_to_hex(s, buf);
	buf[HEX_LEN] = '\n';
	errno = 0;
	if (fchmod(fd, 0600) || write(fd, buf, HEX_LEN + 1) != HEX_LEN + 1)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	explicit_bzero(buf, sizeof(buf));
	if (err)
		unlink(path);
	return err;
}

int sdm_auth_secret_load(struct sdm_auth_secret *ret, const char *path)
{
	char buf[HEX_LEN + 3];
	struct stat st;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		err = -EPERM;
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	buf[n] = '\0';
	err = strlen(buf) == (size_t)n ? sdm_auth_secret_from_hex(ret, buf) : -EBADMSG;
	explicit_bzero(buf, sizeof(buf));
out:
	close(fd);
	return err;
}

/* One hex line from stdin, then stdin is /dev/null (see SDM_AUTH_ENV_STDIN). */
static int secret_from_stdin(struct sdm_auth_secret *ret)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[HEX_LEN + 2];
	size_t got = 0;
	int err = -EBADMSG, null;

	while (got < sizeof(buf) - 1 && (!got || buf[got - 1] != '\n')) {
		ssize_t n;

		if (poll(&pfd, 1, STDIN_SECRET_WAIT_MS) <= 0) {
			err = -ETIMEDOUT;
			goto out;
		}
		n = read(STDIN_FILENO, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			goto out;
		got += n;
	}
	buf[got] = '\0';
	if (got == HEX_LEN + 1 && buf[HEX_LEN] == '\n')
		err = sdm_auth_secret_from_hex(ret, buf);
out:
	explicit_bzero(buf, sizeof(buf));
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	return err;
}

int sdm_auth_secret_from_env(struct sdm_auth_secret *ret)
{
	const char *v = getenv(SDM_AUTH_ENV_FILE);

	if (v && *v)
		return sdm_auth_secret_load(ret, v);
	v = getenv(SDM_AUTH_ENV_STDIN);
	if (v && !strcmp(v, "1"))
		return secret_from_stdin(ret);
	v = getenv(SDM_AUTH_ENV_HEX);
	if (v && *v)
		return sdm_auth_secret_from_hex(ret, v);
	return -ENOENT;
}

int sdm_auth_challenge_new(struct sdm_auth_challenge *ch)
{
	int err = fill_random(ch->nonce, sizeof(ch->nonce));

	ch->armed = !err;
	return err;
}

int sdm_auth_respond(const struct sdm_auth_secret *s, enum sdm_auth_role role,
		     const uint8_t nonce[SDM_AUTH_NONCE_LEN],
		     uint8_t ret_mac[SDM_AUTH_MAC_LEN])
{
	uint8_t msg[sizeof(AUTH_LABEL) - 1 + 1 + SDM_AUTH_NONCE_LEN];
	unsigned int len = 0;

	memcpy(msg, AUTH_LABEL, sizeof(AUTH_LABEL) - 1);
	msg[sizeof(AUTH_LABEL) - 1] = role;
	memcpy(msg + sizeof(AUTH_LABEL), nonce, SDM_AUTH_NONCE_LEN);
	if (!HMAC(EVP_sha256(), s->key, sizeof(s->key), msg, sizeof(msg), ret_mac, &len) ||
	    len != SDM_AUTH_MAC_LEN)
		return -EIO;
	return 0;
}

int sdm_auth_verify(const struct sdm_auth_secret *s, struct sdm_auth_challenge *ch,
		    enum sdm_auth_role peer_role,
		    const uint8_t mac[SDM_AUTH_MAC_LEN])
{
	uint8_t expect[SDM_AUTH_MAC_LEN];
	int err;

	if (!ch->armed)
		return -EINVAL;
	err = sdm_auth_respond(s, peer_role, ch->nonce, expect);
	/* Single use: whatever happens, this nonce is never accepted again. */
	ch->armed = false;
	explicit_bzero(ch->nonce, sizeof(ch->nonce));
	if (!err && CRYPTO_memcmp(expect, mac, SDM_AUTH_MAC_LEN))
		err = -EACCES;
	explicit_bzero(expect, sizeof(expect));
	return err;
}
