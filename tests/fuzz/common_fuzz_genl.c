// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the decoders of what crdbg.ko and the genetlink
 * controller send back (usr/common/nla.c, genl.c): any bytes as one
 * received datagram. Each message is decoded as a crdbg reply, its
 * threads as QUERY's nested records, and an NLMSG_ERROR for its extack
 * text; whatever is accepted must lie inside the datagram and have the
 * type the family gives it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/genl.h>

static void inside(const void *p, size_t n, const uint8_t *buf, size_t size)
{
	const uint8_t *q = p;

	if (q < buf || q + n > buf + size)
		abort();
}

static void threads(const struct nlattr *nest, const uint8_t *buf, size_t size)
{
	static const struct crdbg_nla_policy policy[CRDBG_THREAD_A_MAX + 1] = {
		[CRDBG_THREAD_A_TID] = { .kind = CRDBG_NLA_U32 },
		[CRDBG_THREAD_A_REGS] = { .min_len = sizeof(struct crdbg_regs) },
	};
	const struct nlattr *pos, *tb[CRDBG_THREAD_A_MAX + 1];
	size_t rem;

	crdbg_nla_for_each_nested(pos, nest, rem) {
		inside(pos, pos->nla_len, buf, size);
		if (crdbg_nla_parse_nested(tb, CRDBG_THREAD_A_MAX, pos, policy))
			continue;
		if (tb[CRDBG_THREAD_A_TID] && crdbg_nla_len(tb[CRDBG_THREAD_A_TID]) < 4)
			abort();
		if (tb[CRDBG_THREAD_A_REGS]) {
			struct crdbg_regs regs;

			inside(crdbg_nla_data(tb[CRDBG_THREAD_A_REGS]), sizeof(regs), buf, size);
			memcpy(&regs, crdbg_nla_data(tb[CRDBG_THREAD_A_REGS]), sizeof(regs));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	const struct nlmsghdr *h;
	int rem = (int)size;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
		const struct nlattr *tb[CRDBG_A_MAX + 1];
		const char *text;

		if (h->nlmsg_type == NLMSG_ERROR) {
			text = crdbg_nla_extack_text(h, (size_t)rem);
			if (text && !memchr(text, 0, (size_t)((const char *)buf + size - text)))
				abort();
			continue;
		}
		if (crdbg_genl_parse_message(h, (size_t)rem, tb))
			continue;
		for (int t = 0; t <= CRDBG_A_MAX; t++)
			if (tb[t])
				inside(tb[t], tb[t]->nla_len, buf, size);
		if (tb[CRDBG_A_VERSION])
			(void)strlen(crdbg_nla_string(tb[CRDBG_A_VERSION]));
		if (tb[CRDBG_A_PID])
			(void)crdbg_nla_u32(tb[CRDBG_A_PID]);
		if (tb[CRDBG_A_TRAMPOLINE])
			(void)crdbg_nla_u64(tb[CRDBG_A_TRAMPOLINE]);
		if (tb[CRDBG_A_THREADS])
			threads(tb[CRDBG_A_THREADS], buf, size);
	}
	free(buf);
	return 0;
}
