// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the part protocol's codec (<crdbg/job-part.h>):
 * any bytes parse or are refused without a fault, and what parses formats
 * back to a line that parses to the same message.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <crdbg/job-part.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_part_msg m, again;
	enum job_part_order o, o2;
	char buf[JOB_PART_LINE_MAX + 1];
	int n, code;

	if (!job_part_msg_parse((const char *)data, size, &m)) {
		char buf2[JOB_PART_LINE_MAX + 1];
		int n2;

		n = job_part_msg_format(&m, buf, sizeof(buf));
		assert(n > 0);
		assert(!job_part_msg_parse(buf, (size_t)n, &again));
		assert(again.step == m.step);
		n2 = job_part_msg_format(&again, buf2, sizeof(buf2));
		assert(n2 == n && !memcmp(buf, buf2, (size_t)n));
	}
	if (!job_part_order_parse((const char *)data, size, &o)) {
		n = job_part_order_format(o, buf, sizeof(buf));
		assert(n > 0 && !job_part_order_parse(buf, (size_t)n, &o2) && o == o2);
	}
	if (!job_part_end_agents_parse((const char *)data, size, &code)) {
		size_t len = size && data[size - 1] == '\n' ? size - 1 : size;

		/* one spelling a code: it formats back to the same bytes */
		n = job_part_end_agents_format(code, buf, sizeof(buf));
		assert(code >= 0 && code <= 255 && n > 0 && (size_t)n == len &&
		       !memcmp(buf, data, len));
	}
	return 0;
}
