// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for what is crdbg's own in reading crdbg.ko's
 * answers, over libnl's attribute parsing: any bytes as one received
 * datagram. Each message is checked as a crdbg reply (usr/common/nl.c),
 * its threads decoded as a QUERY reply (usr/freeze/freeze-kmod.c), and
 * an NLMSG_ERROR searched for its extack text; whatever is accepted
 * must lie inside the datagram and have the type the family gives it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/nl.h>

#include "freeze-backend.h"

static void inside(const void *p, size_t n, const uint8_t *buf, size_t size)
{
	const uint8_t *q = p;

	if (q < buf || q + n > buf + size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct nlmsghdr *h;
	int rem = (int)size;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
		struct nlattr *tb[CRDBG_A_MAX + 1];
		struct freeze_thread threads[4];
		struct freeze_kmod_query q = { .threads = threads, .max = 4 };
		const char *text;

		if (h->nlmsg_type == NLMSG_ERROR) {
			text = crdbg_nl_extack_text(h, (size_t)rem);
			if (text && !memchr(text, 0, (size_t)((const char *)buf + size - text)))
				abort();
			continue;
		}
		if (crdbg_nl_parse_message(h, (size_t)rem, tb))
			continue;
		for (int t = 0; t <= CRDBG_A_MAX; t++)
			if (tb[t])
				inside(tb[t], tb[t]->nla_len, buf, size);
		if (tb[CRDBG_A_VERSION])
			(void)strlen(nla_get_string(tb[CRDBG_A_VERSION]));
		if (tb[CRDBG_A_PID] && nla_len(tb[CRDBG_A_PID]) < 4)
			abort();
		if (tb[CRDBG_A_TRAMPOLINE] && nla_len(tb[CRDBG_A_TRAMPOLINE]) < 8)
			abort();
		if (freeze_kmod_parse_query(tb, &q))
			continue;
		for (size_t i = 0; i < q.n && i < q.max; i++)
			if (threads[i].state > FREEZE_THREAD_EXITED)
				abort();
	}
	free(buf);
	return 0;
}
