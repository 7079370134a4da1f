// SPDX-License-Identifier: GPL-2.0
/* The service's one codec: see <crdbg/crdbgd.h>. */
#include <errno.h>
#include <string.h>

#include <crdbg/crdbgd.h>

enum attr_kind { A_NONE, A_U32, A_U64, A_STR, A_PIDS };

struct attr_policy {
	enum attr_kind kind;
	size_t offset, size;	/* where in struct crdbgd_msg; a string's buffer size */
};

#define U32(f) { A_U32, offsetof(struct crdbgd_msg, f), 4 }
#define U64(f) { A_U64, offsetof(struct crdbgd_msg, f), 8 }
#define STR(f) { A_STR, offsetof(struct crdbgd_msg, f), sizeof(((struct crdbgd_msg *)0)->f) }

static const struct attr_policy policy[__CRDBGD_A_LAST] = {
	[CRDBGD_A_PID]		= U32(pid),
	[CRDBGD_A_AFTER]	= U32(after),
	[CRDBGD_A_DEBUG]	= U32(debug),
	[CRDBGD_A_BACKEND]	= U32(backend),
	[CRDBGD_A_FLAGS]	= U32(flags),
	[CRDBGD_A_CRIU_OPT]	= { A_STR, 0, CRS_CRIU_OPT_MAX },	/* repeated: criu_opts[] */
	[CRDBGD_A_HANDLE]	= STR(handle),
	[CRDBGD_A_VALID]	= U32(valid),
	[CRDBGD_A_PROBLEM]	= STR(problem),
	[CRDBGD_A_TIME]		= U64(time),
	[CRDBGD_A_PROGRAM]	= STR(program),
	[CRDBGD_A_PIDS]		= { A_PIDS, offsetof(struct crdbgd_msg, pids), 0 },
	[CRDBGD_A_THREADS]	= U32(threads),
	[CRDBGD_A_BYTES]	= U64(bytes),
	[CRDBGD_A_DEBUGGER]	= U32(debugger),
	[CRDBGD_A_PARENT]	= STR(parent),
	[CRDBGD_A_RC]		= U32(rc),
	[CRDBGD_A_STATUS]	= U32(status),
	[CRDBGD_A_ERROR]	= STR(error),
	[CRDBGD_A_MPIR]		= U32(mpir),
	[CRDBGD_A_CRIU]		= STR(criu),
	[CRDBGD_A_CID]		= STR(cid),
	[CRDBGD_A_PART]		= U32(part),
	[CRDBGD_A_PARTS]	= U32(parts),
	[CRDBGD_A_EXPECT_META]	= STR(expect_meta),
	[CRDBGD_A_NODE_ROOTS]	= STR(node_roots),
	[CRDBGD_A_AGENTS]	= STR(agents),
};

#define HDR_LEN 8

void crdbgd_add_pid(struct crdbgd_msg *m, uint32_t pid)
{
	if (m->nr_pids < CRDBGD_MAX_PIDS)
		m->pids[m->nr_pids++] = pid;
	m->have |= 1u << CRDBGD_A_PIDS;
}

void crdbgd_set_u32(struct crdbgd_msg *m, enum crdbgd_attr a, uint32_t v)
{
	memcpy((char *)m + policy[a].offset, &v, sizeof(v));
	m->have |= 1u << a;
}

void crdbgd_set_u64(struct crdbgd_msg *m, enum crdbgd_attr a, uint64_t v)
{
	memcpy((char *)m + policy[a].offset, &v, sizeof(v));
	m->have |= 1u << a;
}

int crdbgd_set_str(struct crdbgd_msg *m, enum crdbgd_attr a, const char *s)
{
	size_t n = strlen(s);

	if (a == CRDBGD_A_CRIU_OPT) {
		if (m->nr_criu_opts >= CRS_MAX_CRIU_OPTS || n >= CRS_CRIU_OPT_MAX)
			return -EINVAL;
		memcpy(m->criu_opts[m->nr_criu_opts++], s, n + 1);
	} else {
		if (n >= policy[a].size)
			n = policy[a].size - 1;	/* a reply's text: cut, not lost */
		memcpy((char *)m + policy[a].offset, s, n);
		((char *)m)[policy[a].offset + n] = '\0';
	}
	m->have |= 1u << a;
	return 0;
}

static int put(uint8_t *buf, size_t len, size_t *off, uint16_t type, const void *v, size_t n)
{
	uint16_t l = (uint16_t)n;

	if (n > UINT16_MAX || *off + 4 + n > len)
		return -EMSGSIZE;
	memcpy(buf + *off, &type, 2);
	memcpy(buf + *off + 2, &l, 2);
	memcpy(buf + *off + 4, v, n);
	*off += 4 + n;
	return 0;
}

int crdbgd_format(const struct crdbgd_msg *m, uint8_t *buf, size_t len)
{
	uint32_t magic = CRDBGD_MAGIC;
	uint16_t ver = CRDBGD_VERSION, kind = (uint16_t)m->kind;
	size_t off = HDR_LEN;
	int r = 0;

	if (m->kind <= CRDBGD_OP_UNSPEC || m->kind > CRDBGD_OP_MAX || len < HDR_LEN ||
	    (m->flags & ~(uint32_t)__CRDBGD_F_ALL))
		return -EINVAL;
	memcpy(buf, &magic, 4);
	memcpy(buf + 4, &ver, 2);
	memcpy(buf + 6, &kind, 2);
	for (int a = 1; a <= CRDBGD_A_MAX && !r; a++) {
		const struct attr_policy *p = &policy[a];
		const char *field = (const char *)m + p->offset;

		if (!(m->have & (1u << a)))
			continue;
		if (a == CRDBGD_A_CRIU_OPT)
			for (uint32_t i = 0; i < m->nr_criu_opts && !r; i++)
				r = put(buf, len, &off, (uint16_t)a, m->criu_opts[i],
					strlen(m->criu_opts[i]) + 1);
		else if (p->kind == A_PIDS)
			r = put(buf, len, &off, (uint16_t)a, m->pids,
				(m->nr_pids < CRDBGD_MAX_PIDS ? m->nr_pids : CRDBGD_MAX_PIDS) * 4);
		else if (p->kind == A_STR)
			r = put(buf, len, &off, (uint16_t)a, field, strnlen(field, p->size - 1) + 1);
		else
			r = put(buf, len, &off, (uint16_t)a, field, p->size);
	}
	return r ? r : (int)off;
}

/* One attribute's value into m: 0 or -EBADMSG. */
static int take(struct crdbgd_msg *m, uint16_t type, const uint8_t *v, uint16_t n)
{
	const struct attr_policy *p;

	if (!type || type > CRDBGD_A_MAX)
		return -EBADMSG;
	p = &policy[type];
	if ((m->have & (1u << type)) && type != CRDBGD_A_CRIU_OPT)
		return -EBADMSG;
	if (p->kind == A_PIDS) {
		if (n % 4 || n / 4 > CRDBGD_MAX_PIDS)
			return -EBADMSG;
		memcpy(m->pids, v, n);
		m->nr_pids = n / 4u;
	} else if (p->kind == A_STR) {
		if (!n || n > p->size || v[n - 1] || memchr(v, '\0', n - 1))
			return -EBADMSG;
		if (type == CRDBGD_A_CRIU_OPT) {
			if (m->nr_criu_opts >= CRS_MAX_CRIU_OPTS)
				return -EBADMSG;
			memcpy(m->criu_opts[m->nr_criu_opts++], v, n);
		} else {
			memcpy((char *)m + p->offset, v, n);
		}
	} else {
		if (n != p->size)
			return -EBADMSG;
		memcpy((char *)m + p->offset, v, n);
	}
	m->have |= 1u << type;
	return 0;
}

int crdbgd_parse(const uint8_t *buf, size_t len, struct crdbgd_msg *ret)
{
	uint32_t magic;
	uint16_t ver, kind, type, n;
	size_t off = HDR_LEN;

	memset(ret, 0, sizeof(*ret));
	if (len < HDR_LEN || len > CRDBGD_MSG_MAX)
		return -EBADMSG;
	memcpy(&magic, buf, 4);
	memcpy(&ver, buf + 4, 2);
	memcpy(&kind, buf + 6, 2);
	if (magic != CRDBGD_MAGIC || ver != CRDBGD_VERSION || !kind || kind > CRDBGD_OP_MAX)
		return -EBADMSG;
	ret->kind = (enum crdbgd_op)kind;
	while (off < len) {
		if (len - off < 4)
			return -EBADMSG;
		memcpy(&type, buf + off, 2);
		memcpy(&n, buf + off + 2, 2);
		if (len - off - 4 < n || take(ret, type, buf + off + 4, n))
			return -EBADMSG;
		off += 4 + n;
	}
	if (ret->flags & ~(uint32_t)__CRDBGD_F_ALL)
		return -EBADMSG;
	return 0;
}

bool crdbgd_is_request(enum crdbgd_op kind)
{
	return (kind > CRDBGD_OP_UNSPEC && kind <= CRDBGD_OP_RM) ||
	       kind == CRDBGD_OP_PART_CHECKPOINT || kind == CRDBGD_OP_PART_RESTART;
}

size_t crdbgd_proof_fds(uint32_t flags)
{
	return 3 + !!(flags & CRDBGD_F_STORE);
}

size_t crdbgd_request_fds(enum crdbgd_op op, uint32_t flags)
{
	bool proof = op == CRDBGD_OP_CHECKPOINT || op == CRDBGD_OP_PART_CHECKPOINT;

	return crdbgd_proof_fds(flags) + (proof ? 2 : 0) +
	       (op == CRDBGD_OP_PART_RESTART && (flags & CRDBGD_F_TERMINAL) ? 1 : 0);
}
