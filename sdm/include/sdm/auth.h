/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connection authentication with a per-session secret.
 *
 * The front end makes a random 32-byte secret per session and gives it to
 * the master and servers either in a 0600 file (SDM_SECRET_FILE=path) or
 * as hex in the environment (SDM_SECRET=64 hex digits). The secret never
 * goes on the wire: each side proves it knows it by returning
 * HMAC-SHA256(secret, "crdbg-sdm-auth-v1" || role || nonce) for a fresh
 * random nonce the other side chose (Documentation/sdm.md,
 * "Authentication"). Recommended handshake, before any other frame:
 *
 *   acceptor  -> connector  AUTH_CHALLENGE(nonce_a)
 *   connector -> acceptor   AUTH_RESPONSE(mac(CONNECTOR, nonce_a))
 *                           AUTH_CHALLENGE(nonce_c)
 *   acceptor  -> connector  AUTH_RESPONSE(mac(ACCEPTOR, nonce_c))
 *
 * A peer that sends anything else first, or a wrong response, is dropped.
 * The role in the MAC stops a peer reflecting a challenge back; a
 * challenge is single use (verify consumes it), so an old response is
 * never accepted again.
 */
#ifndef SDM_AUTH_H
#define SDM_AUTH_H

#include "sdm/common.h"

#define SDM_AUTH_SECRET_LEN	32
#define SDM_AUTH_NONCE_LEN	32
#define SDM_AUTH_MAC_LEN	32

#define SDM_AUTH_ENV_FILE	"SDM_SECRET_FILE"
#define SDM_AUTH_ENV_HEX	"SDM_SECRET"
/*
 * Set to 1: the secret comes as one hex line on standard input, which is
 * then replaced by /dev/null. How a front end hands it to servers started
 * on other nodes: it travels inside the launcher's own stdin forwarding,
 * never on a command line, in the environment or in a shared file.
 */
#define SDM_AUTH_ENV_STDIN	"SDM_SECRET_STDIN"

struct sdm_auth_secret {
	uint8_t key[SDM_AUTH_SECRET_LEN];
};

/* Who computed a response: the side that opened the connection or accepted it. */
enum sdm_auth_role {
	SDM_AUTH_CONNECTOR = 1,
	SDM_AUTH_ACCEPTOR = 2,
};

/* One outstanding challenge: the nonce sent to the peer. */
struct sdm_auth_challenge {
	uint8_t nonce[SDM_AUTH_NONCE_LEN];
	bool armed;		/* a nonce was made and not yet verified against */
};

/* Fill *ret from the kernel's random source. 0 or -errno. */
int sdm_auth_secret_generate(struct sdm_auth_secret *ret);

/*
 * Write the secret as 64 hex digits and a newline to a new file of mode
 * 0600 (fails with -EEXIST if path exists). 0 or -errno.
 */
int sdm_auth_secret_save(const struct sdm_auth_secret *s, const char *path);

/*
 * Read a secret written by sdm_auth_secret_save(). Refuses (-EPERM) a file
 * that is not a regular file owned by us, or that group or others may
 * read or write; -EBADMSG if the content is not 64 hex digits.
 */
int sdm_auth_secret_load(struct sdm_auth_secret *ret, const char *path);

/* 64 hex digits + NUL into buf (size >= 65). */
void sdm_auth_secret_to_hex(const struct sdm_auth_secret *s, char *buf);
/* Parse exactly 64 hex digits (a trailing newline is allowed). 0 or -EBADMSG. */
int sdm_auth_secret_from_hex(struct sdm_auth_secret *ret, const char *hex);

/*
 * The secret this process was given: $SDM_SECRET_FILE if set, else a
 * line on stdin if $SDM_SECRET_STDIN is 1 (-ETIMEDOUT if none comes
 * within 30 s), else $SDM_SECRET. -ENOENT if none is set, else as
 * load/from_hex.
 */
int sdm_auth_secret_from_env(struct sdm_auth_secret *ret);

/* Make a fresh random nonce in *ch (to send in AUTH_CHALLENGE). 0 or -errno. */
int sdm_auth_challenge_new(struct sdm_auth_challenge *ch);

/* The response of role to a nonce received in AUTH_CHALLENGE. 0 or -EIO. */
int sdm_auth_respond(const struct sdm_auth_secret *s, enum sdm_auth_role role,
		     const uint8_t nonce[SDM_AUTH_NONCE_LEN],
		     uint8_t ret_mac[SDM_AUTH_MAC_LEN]);

/*
 * Check a response from a peer of role peer_role to challenge *ch, in
 * constant time. The challenge is consumed whatever the outcome: a second
 * verify fails. 0 if the peer knows the secret, -EACCES if not, -EINVAL
 * if the challenge was not armed.
 */
int sdm_auth_verify(const struct sdm_auth_secret *s, struct sdm_auth_challenge *ch,
		    enum sdm_auth_role peer_role,
		    const uint8_t mac[SDM_AUTH_MAC_LEN]);

/* Overwrite a secret in memory. */
void sdm_auth_secret_wipe(struct sdm_auth_secret *s);

#endif /* SDM_AUTH_H */
