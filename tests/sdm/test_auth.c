// SPDX-License-Identifier: GPL-2.0
/*
 * Session secret and HMAC challenge-response: the right secret is
 * accepted, a wrong one rejected, an old response never accepted again,
 * a reflected response rejected; the secret file is 0600 and checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdm/auth.h"

FIXTURE(auth) {
	struct sdm_auth_secret secret, other;
	char dir[64];
	char path[128];
};

FIXTURE_SETUP(auth)
{
	ASSERT_EQ(0, sdm_auth_secret_generate(&self->secret));
	ASSERT_EQ(0, sdm_auth_secret_generate(&self->other));
	ASSERT_NE(0, memcmp(&self->secret, &self->other, sizeof(self->secret)));
	strcpy(self->dir, "/tmp/sdm-auth-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/secret", self->dir);
}

FIXTURE_TEARDOWN(auth)
{
	unlink(self->path);
	EXPECT_EQ(0, rmdir(self->dir));
}

/* One side challenges, the other responds as role, the first verifies. */
static int exchange(const struct sdm_auth_secret *verifier,
		    const struct sdm_auth_secret *prover, enum sdm_auth_role role)
{
	struct sdm_auth_challenge ch;
	uint8_t mac[SDM_AUTH_MAC_LEN];
	int err;

	err = sdm_auth_challenge_new(&ch);
	if (!err)
		err = sdm_auth_respond(prover, role, ch.nonce, mac);
	if (!err)
		err = sdm_auth_verify(verifier, &ch, role, mac);
	return err;
}

TEST_F(auth, right_secret_accepted_wrong_rejected)
{
	ASSERT_EQ(0, exchange(&self->secret, &self->secret, SDM_AUTH_CONNECTOR));
	ASSERT_EQ(0, exchange(&self->secret, &self->secret, SDM_AUTH_ACCEPTOR));
	ASSERT_EQ(-EACCES, exchange(&self->secret, &self->other, SDM_AUTH_CONNECTOR));
	ASSERT_EQ(-EACCES, exchange(&self->other, &self->secret, SDM_AUTH_ACCEPTOR));
}

TEST_F(auth, replay_rejected)
{
	struct sdm_auth_challenge old, fresh;
	uint8_t mac[SDM_AUTH_MAC_LEN];

	ASSERT_EQ(0, sdm_auth_challenge_new(&old));
	ASSERT_EQ(0, sdm_auth_respond(&self->secret, SDM_AUTH_CONNECTOR, old.nonce, mac));
	ASSERT_EQ(0, sdm_auth_verify(&self->secret, &old, SDM_AUTH_CONNECTOR, mac));
	/* The same response again: the challenge is spent. */
	ASSERT_EQ(-EINVAL, sdm_auth_verify(&self->secret, &old, SDM_AUTH_CONNECTOR, mac));
	/* Against a new challenge: a fresh nonce, so the old MAC is wrong. */
	ASSERT_EQ(0, sdm_auth_challenge_new(&fresh));
	ASSERT_NE(0, memcmp(old.nonce, fresh.nonce, SDM_AUTH_NONCE_LEN));
	ASSERT_EQ(-EACCES, sdm_auth_verify(&self->secret, &fresh, SDM_AUTH_CONNECTOR, mac));
	/* A failed verify spends the challenge too. */
	ASSERT_EQ(0, sdm_auth_respond(&self->secret, SDM_AUTH_CONNECTOR, fresh.nonce, mac));
	ASSERT_EQ(-EINVAL, sdm_auth_verify(&self->secret, &fresh, SDM_AUTH_CONNECTOR, mac));
}

TEST_F(auth, reflection_rejected)
{
	struct sdm_auth_challenge ch;
	uint8_t mac[SDM_AUTH_MAC_LEN];

	/* A response made by (or for) the acceptor does not pass as the connector's. */
	ASSERT_EQ(0, sdm_auth_challenge_new(&ch));
	ASSERT_EQ(0, sdm_auth_respond(&self->secret, SDM_AUTH_ACCEPTOR, ch.nonce, mac));
	ASSERT_EQ(-EACCES, sdm_auth_verify(&self->secret, &ch, SDM_AUTH_CONNECTOR, mac));
}

static int overwrite(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

TEST_F(auth, secret_file)
{
	struct sdm_auth_secret back;
	struct stat st;
	char hex[2 * SDM_AUTH_SECRET_LEN + 1];

	ASSERT_EQ(0, sdm_auth_secret_save(&self->secret, self->path));
	ASSERT_EQ(0, stat(self->path, &st));
	ASSERT_EQ(0600, st.st_mode & 0777);
	ASSERT_EQ(2 * SDM_AUTH_SECRET_LEN + 1, st.st_size);
	ASSERT_EQ(-EEXIST, sdm_auth_secret_save(&self->secret, self->path));
	ASSERT_EQ(0, sdm_auth_secret_load(&back, self->path));
	ASSERT_EQ(0, memcmp(&back, &self->secret, sizeof(back)));

	/* Through the environment: the file first, then hex. */
	ASSERT_EQ(0, setenv(SDM_AUTH_ENV_FILE, self->path, 1));
	memset(&back, 0, sizeof(back));
	ASSERT_EQ(0, sdm_auth_secret_from_env(&back));
	ASSERT_EQ(0, memcmp(&back, &self->secret, sizeof(back)));
	unsetenv(SDM_AUTH_ENV_FILE);
	sdm_auth_secret_to_hex(&self->other, hex);
	ASSERT_EQ(0, setenv(SDM_AUTH_ENV_HEX, hex, 1));
	ASSERT_EQ(0, sdm_auth_secret_from_env(&back));
	ASSERT_EQ(0, memcmp(&back, &self->other, sizeof(back)));
	unsetenv(SDM_AUTH_ENV_HEX);
	ASSERT_EQ(-ENOENT, sdm_auth_secret_from_env(&back));

	/* A file others may read is refused. */
	ASSERT_EQ(0, chmod(self->path, 0644));
	ASSERT_EQ(-EPERM, sdm_auth_secret_load(&back, self->path));
	ASSERT_EQ(0, chmod(self->path, 0600));
	/* Garbage content is refused. */
	ASSERT_EQ(0, overwrite(self->path, "zzzz\n"));
	ASSERT_EQ(-EBADMSG, sdm_auth_secret_load(&back, self->path));
}

TEST(hex_form)
{
	struct sdm_auth_secret s, back;
	char hex[2 * SDM_AUTH_SECRET_LEN + 2];

	for (int i = 0; i < SDM_AUTH_SECRET_LEN; i++)
		s.key[i] = i * 7 + 1;
	sdm_auth_secret_to_hex(&s, hex);
	ASSERT_EQ(2 * SDM_AUTH_SECRET_LEN, strlen(hex));
	ASSERT_EQ(0, sdm_auth_secret_from_hex(&back, hex));
	ASSERT_EQ(0, memcmp(&s, &back, sizeof(s)));
	strcat(hex, "\n");
	ASSERT_EQ(0, sdm_auth_secret_from_hex(&back, hex));
	ASSERT_EQ(-EBADMSG, sdm_auth_secret_from_hex(&back, "abcd"));
	hex[2 * SDM_AUTH_SECRET_LEN] = 'x';
	ASSERT_EQ(-EBADMSG, sdm_auth_secret_from_hex(&back, hex));
	hex[3] = 'g';
	ASSERT_EQ(-EBADMSG, sdm_auth_secret_from_hex(&back, hex));
}

/*
 * The response is HMAC-SHA256(secret, "crdbg-sdm-auth-v1" || role ||
 * nonce), the same on every build: what libcrypto computes is checked against Python's hmac
 * module (key 00..1f, nonce 40..5f). A mac one bit off is refused.
 */
TEST(auth_known_answer)
{
	static const uint8_t connector[SDM_AUTH_MAC_LEN] = {
		0xae, 0xbc, 0xa9, 0xa2, 0x65, 0xdd, 0x0b, 0x82, 0xf7, 0xdf, 0xfc, 0xb8, 0x58,
		0x93, 0xee, 0x0c, 0x14, 0x41, 0x32, 0xf9, 0xb2, 0xd8, 0xb6, 0xbd, 0xba, 0x0a,
		0x3e, 0x9e, 0xfd, 0x18, 0xa0, 0x6e,
	};
	static const uint8_t acceptor[SDM_AUTH_MAC_LEN] = {
		0xa9, 0x5b, 0xe6, 0x7c, 0x2f, 0x0c, 0x50, 0x97, 0xd5, 0xca, 0x97, 0x6c, 0x18,
		0x27, 0xb8, 0x15, 0x9c, 0x3e, 0xdd, 0x6e, 0x6e, 0x4c, 0x07, 0x06, 0xa5, 0x42,
		0x7d, 0x62, 0x36, 0x31, 0x47, 0xec,
	};
	struct sdm_auth_challenge ch = { .armed = true };
	struct sdm_auth_secret s;
	uint8_t mac[SDM_AUTH_MAC_LEN], off[SDM_AUTH_MAC_LEN];
	int i;

	for (i = 0; i < SDM_AUTH_SECRET_LEN; i++)
		s.key[i] = (uint8_t)i;
	for (i = 0; i < SDM_AUTH_NONCE_LEN; i++)
		ch.nonce[i] = (uint8_t)(0x40 + i);
	ASSERT_EQ(0, sdm_auth_respond(&s, SDM_AUTH_CONNECTOR, ch.nonce, mac));
	EXPECT_EQ(0, memcmp(mac, connector, sizeof(mac)));
	ASSERT_EQ(0, sdm_auth_respond(&s, SDM_AUTH_ACCEPTOR, ch.nonce, mac));
	EXPECT_EQ(0, memcmp(mac, acceptor, sizeof(mac)));

	memcpy(off, acceptor, sizeof(off));
	off[SDM_AUTH_MAC_LEN - 1] ^= 1;
	EXPECT_EQ(-EACCES, sdm_auth_verify(&s, &ch, SDM_AUTH_ACCEPTOR, off));
	for (i = 0; i < SDM_AUTH_NONCE_LEN; i++)
		ch.nonce[i] = (uint8_t)(0x40 + i);
	ch.armed = true;
	EXPECT_EQ(0, sdm_auth_verify(&s, &ch, SDM_AUTH_ACCEPTOR, acceptor));
}

TEST_HARNESS_MAIN
