// SPDX-License-Identifier: GPL-2.0
/* Parsers of the MPIR marker lines (<crdbg/mpir-checkpoint.h>). */
#include <errno.h>
#include <string.h>

#include <crdbg/mpir-checkpoint.h>

/*
 * Skip "MPIR<sep>words...) " where <sep> is ' ' or '_' between the words
 * given in want (space-separated); returns the rest or NULL.
 */
static const char *skip_prefix(const char *line, const char *want)
{
	while (*line == ' ' || *line == '\t')
		line++;
	for (; *want; want++, line++) {
		if (*want == ' ') {
			if (*line != ' ' && *line != '_')
				return NULL;
		} else if (*line != *want) {
			return NULL;
		}
	}
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* Length of the value without trailing newline/space. */
static size_t value_len(const char *v)
{
	size_t n = strlen(v);

	while (n && (v[n - 1] == '\n' || v[n - 1] == '\r' || v[n - 1] == ' ' ||
		     v[n - 1] == '\t'))
		n--;
	return n;
}

int crs_parse_debug_info(const char *line, char *host, size_t hostlen, pid_t *ret_pid)
{
	const char *v = skip_prefix(line, "MPIR debug info)");
	const char *colon;
	size_t n, hl, i;
	long pid = 0;

	if (!v)
		return -EINVAL;
	n = value_len(v);
	colon = NULL;
	for (i = 0; i < n; i++) {
		if (v[i] == ' ' || v[i] == '\t')
			return -EINVAL;
		if (v[i] == ':')
			colon = v + i;
	}
	if (!colon)
		return -EINVAL;
	hl = (size_t)(colon - v);
	if (hl == 0 || hl >= hostlen)
		return -EINVAL;
	if (colon + 1 == v + n)
		return -EINVAL;
	for (i = hl + 1; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		pid = pid * 10 + (v[i] - '0');
		if (pid > 0x3fffffff)
			return -EINVAL;
	}
	if (pid <= 0)
		return -EINVAL;
	memcpy(host, v, hl);
	host[hl] = '\0';
	*ret_pid = (pid_t)pid;
	return 0;
}

int crs_parse_checkpoint_handle(const char *line, char *handle, size_t handlelen)
{
	const char *v = skip_prefix(line, "MPIR checkpoint handle)");
	size_t n, i;

	if (!v)
		return -EINVAL;
	n = value_len(v);
	if (n == 0 || n >= handlelen)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (v[i] == '\n' || (unsigned char)v[i] < 0x20)
			return -EINVAL;
	memcpy(handle, v, n);
	handle[n] = '\0';
	return 0;
}
