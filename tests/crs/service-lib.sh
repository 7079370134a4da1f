# SPDX-License-Identifier: GPL-2.0
#
# What the service's guest tests share, sourced after lib.sh: two users,
# alice and bob, root's seal key, crdbgd in the foreground on a socket of
# the test's own, and their helpers. Its first check: the service listens.
prog=$build/tests/crs/prog_ckpt
crdbgd=$build/crdbgd
key=/etc/crdbg/seal.key
sock=$work/crdbgd.sock
STEPS=50
NAP=20
chmod 755 "$work"
mkdir -p "$CRDBG_STORE"

cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null
	pkill -9 -u alice 2>/dev/null
	pkill -9 -u bob 2>/dev/null
	[ -n "${CRDBG_RESULTS:-}" ] && cp "$work/crdbgd.log" "$CRDBG_RESULTS/${0##*/}-crdbgd.log" 2>/dev/null
	rm -rf "$work" /etc/crdbg /var/lib/crdbg
}
trap cleanup EXIT

echo "TAP version 13"
for u in alice bob; do
	id "$u" >/dev/null 2>&1 || useradd -M -U -d "$work/$u" -s /bin/sh "$u"
	install -d -o "$u" -g "$u" -m 755 "$work/$u"
done
uid_a=$(id -u alice) gid_a=$(id -g alice)

# as USER CMD...: CMD as USER, with nothing of root's environment but these.
as() {
	local u=$1; shift
	setpriv --reuid="$u" --regid="$u" --init-groups -- \
		env -i PATH=/usr/bin:/bin HOME="$work/$u" CRDBG_SERVICE_SOCKET="$sock" "$@"
}

install -d -m 755 /etc/crdbg /var/lib/crdbg
(umask 077 && head -c 32 /dev/urandom >"$key")
"$crdbgd" --foreground --socket "$sock" >"$work/crdbgd.log" 2>&1 &
dpid=$!
check "crdbgd --foreground listens on a socket anyone may connect to" \
	wait_for test -S "$sock" || diag "$work/crdbgd.log"

# start USER NAME [PRELOAD]: USER's prog_ckpt (libcrdbg preloaded if given)
# waiting after step 5; sets pid.
start() {
	local u=$1 name=$2 d=$work/$1
	rm -f "$d/go"
	as "$u" sh -c 'echo $$ >"$1"; exec env CKPT_GO="$2" LD_PRELOAD="$7" setsid "$3" 1 "$4" "$5" >"$6" 2>&1 </dev/null' \
		sh "$d/$name.pid" "$d/go" "$prog" "$STEPS" "$NAP" "$d/$name.out" "${3:-}" &
	wait_for has_line "$d/$name.out" '^step 5$'
	pid=$(cat "$d/$name.pid")
	pids+=("$pid")
}
# one_line FILE: exactly one line, and it starts "crdbg: ".
one_line() { [[ $(wc -l <"$1") == 1 ]] && grep -q '^crdbg: ' "$1"; }
state() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }
seq 0 $((STEPS - 1)) | sed 's/^/step /' >"$work/expected"
same_steps() { grep -E '^step ' "$1" | cmp -s "$work/expected" -; }
# back_as PID UID: PID runs again, as UID.
back_as() { [[ $(stat -c %u "/proc/$1" 2>/dev/null) == "$2" && $(state "$1") != [Tt] ]]; }
