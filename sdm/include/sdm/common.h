/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions shared by every part of the SDM (scalable debug manager).
 *
 * Conventions of the whole sdm/ library:
 *  - functions that act return 0 (or a byte count) on success and a negative
 *    errno on failure; predicates return bool;
 *  - -ENOMEM when an allocation fails, -EINVAL for a bad argument,
 *    -EBADMSG for malformed input from a peer (wire decoders),
 *    -ERANGE for an id above SDM_SET_MAX_ID, -ENOSPC when a caller's buffer
 *    is too small, -EMSGSIZE when a message would exceed SDM_MSG_MAX;
 *  - output parameters are named ret_* and are left untouched on failure;
 *  - destructors accept NULL.
 */
#ifndef SDM_COMMON_H
#define SDM_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A server id: servers are numbered 0..N-1 (N = routing table size). */
typedef uint32_t sdm_id;

/*
 * Largest id an id set can hold (sdm_set_max()). 2^24 ids is
 * far above any job we debug and bounds what a peer can make us allocate
 * for one set (see idset.h).
 */
#define SDM_SET_MAX_ID		((sdm_id)((1u << 24) - 1))

/* Pseudo ids for the two processes above server 0 (never stored in sets). */
#define SDM_MASTER		((sdm_id)0xfffffffe)
#define SDM_FRONTEND		((sdm_id)0xffffffff)

#endif /* SDM_COMMON_H */
