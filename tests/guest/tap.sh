# SPDX-License-Identifier: GPL-2.0
# TAP helpers for the guest test scripts (sourced; they set $backend, the
# label of every line). ok/not_ok/skip count in $n and $failed.
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n $backend: $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $backend: $*"; }
skip() { n=$((n + 1)); echo "ok $n $backend: $1 # SKIP $2"; }
# check DESC CMD...: one TAP line for CMD's outcome; fails as CMD did, so
# that "check ... || diag FILE" shows why.
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; return 1; fi; }
diag() { sed "s/^/# /" "$@" 2>/dev/null | head -n "${DIAG_LINES:-20}"; }

# wait_for COND...: poll a condition for at most ~60 s.
wait_for() {
	local i
	for i in $(seq 600); do "$@" && return 0; sleep 0.1; done
	return 1
}
gone() { ! kill -0 "$1" 2>/dev/null; }
