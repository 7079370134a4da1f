# SPDX-License-Identifier: GPL-2.0
#
# The start that the checkpoint service's guest tests (tests/crs/test_*.sh)
# share, sourced with the script's short name and its arguments:
#
#	. "$(dirname "$0")/lib.sh" stdio "$@"
#
# It sets backend (the first argument: ptrace or kmod), top, build,
# crdbg, work (a fresh directory, removed at exit) holding the store
# (CRDBG_STORE), and pids (killed at exit; a script whose exit must do
# more defines its own cleanup after this); it gives has_line FILE RE and
# ids PID ALL (pid, [ppid,] pgid and sid on one line) and the TAP helpers
# of tests/guest/tap.sh.

backend=${2:?usage: ${0##*/} ptrace|kmod}
top=${CRDBG_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
work=$(mktemp -d "/tmp/crdbg-$1-$backend.XXXXXX")
export CRDBG_STORE=$work/store
. "$top/tests/guest/tap.sh"
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

has_line() { grep -q -- "$2" "$1" 2>/dev/null; }
ids() { ps -o pid=,ppid=,pgid=,sid= -p "$1" | awk -v all="$2" '{ print all ? $1" "$2" "$3" "$4 : $1" "$3" "$4 }'; }
