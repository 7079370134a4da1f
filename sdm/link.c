// SPDX-License-Identifier: GPL-2.0
/*
 * Authenticated frames (sdm/include/sdm/link.h): per-direction keys from
 * HKDF and an HMAC-SHA-256 tag over an implicit sequence number and the
 * frame, all from libcrypto.
 */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "sdm/link.h"

#define LINK_LABEL	"crdbg-sdm-frame-v1"
#define LINK_KEY_LEN	32

enum { DIR_TO_ACCEPTOR = 1, DIR_TO_CONNECTOR = 2 };

/* HKDF-SHA-256(secret, salt, LINK_LABEL || dir) into key. 0 or -EIO. */
static int derive(const struct sdm_auth_secret *s, const uint8_t *salt,
		  size_t salt_len, uint8_t dir, uint8_t key[LINK_KEY_LEN])
{
	uint8_t info[sizeof(LINK_LABEL)];
	size_t len = LINK_KEY_LEN;
	EVP_PKEY_CTX *ctx;
	int ok;

	memcpy(info, LINK_LABEL, sizeof(LINK_LABEL) - 1);
	info[sizeof(LINK_LABEL) - 1] = dir;
	ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	if (!ctx)
		return -EIO;
	ok = EVP_PKEY_derive_init(ctx) > 0 &&
	     EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
	     EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, salt_len) > 0 &&
	     EVP_PKEY_CTX_set1_hkdf_key(ctx, s->key, sizeof(s->key)) > 0 &&
	     EVP_PKEY_CTX_add1_hkdf_info(ctx, info, sizeof(info)) > 0 &&
	     EVP_PKEY_derive(ctx, key, &len) > 0 && len == LINK_KEY_LEN;
	EVP_PKEY_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

/* An HMAC-SHA-256 context keyed with key, or NULL. */
static EVP_MAC_CTX *mac_new(const uint8_t key[LINK_KEY_LEN])
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;

	EVP_MAC_free(mac);	/* the context holds its own reference */
	if (ctx && !EVP_MAC_init(ctx, key, LINK_KEY_LEN, params)) {
		EVP_MAC_CTX_free(ctx);
		ctx = NULL;
	}
	return ctx;
}

int sdm_link_init(struct sdm_link *ret, const struct sdm_auth_secret *s,
		  enum sdm_auth_role role,
		  const uint8_t my_nonce[SDM_AUTH_NONCE_LEN],
		  const uint8_t peer_nonce[SDM_AUTH_NONCE_LEN])
{
	bool acceptor = role == SDM_AUTH_ACCEPTOR;
	uint8_t salt[2 * SDM_AUTH_NONCE_LEN];
	uint8_t tx[LINK_KEY_LEN], rx[LINK_KEY_LEN];
	struct sdm_link l = { 0 };
	int err;

	memcpy(salt, acceptor ? my_nonce : peer_nonce, SDM_AUTH_NONCE_LEN);
	memcpy(salt + SDM_AUTH_NONCE_LEN, acceptor ? peer_nonce : my_nonce,
	       SDM_AUTH_NONCE_LEN);
	err = derive(s, salt, sizeof(salt),
		     acceptor ? DIR_TO_CONNECTOR : DIR_TO_ACCEPTOR, tx);
	if (!err)
		err = derive(s, salt, sizeof(salt),
			     acceptor ? DIR_TO_ACCEPTOR : DIR_TO_CONNECTOR, rx);
	if (!err) {
		l.tx_mac = mac_new(tx);
		l.rx_mac = mac_new(rx);
		if (!l.tx_mac || !l.rx_mac) {
			sdm_link_free(&l);
			err = -ENOMEM;
		}
	}
	OPENSSL_cleanse(tx, sizeof(tx));
	OPENSSL_cleanse(rx, sizeof(rx));
	if (!err)
		*ret = l;
	return err;
}

void sdm_link_free(struct sdm_link *l)
{
	EVP_MAC_CTX_free(l->tx_mac);
	EVP_MAC_CTX_free(l->rx_mac);
	l->tx_mac = l->rx_mac = NULL;
}

/* HMAC(key of ctx, seq || frame). Re-initialising keeps the key. 0 or -EIO. */
static int tag_of(EVP_MAC_CTX *ctx, uint64_t seq, const void *frame,
		  size_t len, uint8_t tag[SDM_LINK_TAG_LEN])
{
	uint8_t be[8];
	size_t out = 0;

	for (int i = 0; i < 8; i++)
		be[i] = seq >> (56 - 8 * i);
	if (!ctx || !EVP_MAC_init(ctx, NULL, 0, NULL) ||
	    !EVP_MAC_update(ctx, be, sizeof(be)) ||
	    !EVP_MAC_update(ctx, frame, len) ||
	    !EVP_MAC_final(ctx, tag, &out, SDM_LINK_TAG_LEN) ||
	    out != SDM_LINK_TAG_LEN)
		return -EIO;
	return 0;
}

int sdm_link_seal(struct sdm_link *l, const void *frame, size_t len,
		  uint8_t ret_tag[SDM_LINK_TAG_LEN])
{
	int err = tag_of(l->tx_mac, l->tx_seq, frame, len, ret_tag);

	if (!err)
		l->tx_seq++;
	return err;
}

int sdm_link_open(struct sdm_link *l, const void *buf, size_t len,
		  size_t max_frame, struct sdm_frame_hdr *ret_hdr,
		  size_t *ret_len)
{
	uint8_t expect[SDM_LINK_TAG_LEN];
	struct sdm_frame_hdr h;
	size_t need;
	int err;

	err = sdm_frame_header_decode(buf, len, &h);
	if (err)
		return err;
	need = SDM_FRAME_HDR_LEN + (size_t)h.body_len;
	if (max_frame && need > max_frame)
		return -EMSGSIZE;
	if (len < need + SDM_LINK_TAG_LEN)
		return -EAGAIN;
	err = tag_of(l->rx_mac, l->rx_seq, buf, need, expect);
	if (!err && CRYPTO_memcmp(expect, (const uint8_t *)buf + need,
				  SDM_LINK_TAG_LEN))
		err = -EKEYREJECTED;
	if (err)
		return err;
	l->rx_seq++;
	*ret_hdr = h;
	*ret_len = need;
	return 0;
}
