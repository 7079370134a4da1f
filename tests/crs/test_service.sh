#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbgd, the node's root service, for two ordinary users in the guest
# (a writable root: the group boots with --overlay). TAP on stdout.
#
#   alice: crdbg checkpoint|restart|list|verify|rm --(unix socket)--> crdbgd (root) --> criu
#   bob:   the same commands on alice's processes and checkpoints: refused
#
# Then one test per attack the service must stop: a forged criu-opt
# (re-sealed), images whose creds say uid 0, a symlink in a put-back
# path, the caller's environment reaching root, a store that is not the
# caller's, another user's handle. Argument: the freeze backend.
set -u
. "$(dirname "$0")/lib.sh" service "$@"
. "$(dirname "$0")/service-lib.sh"

# --- alice's own process and checkpoint ---
start alice a1
as alice timeout -k 10 300 "$crdbg" checkpoint "$pid" --kill >"$work/a1.handle" 2>"$work/a1.err"
rc=$?
h=$(tail -n 1 "$work/a1.handle")
check "alice checkpoints her own process through the service (--kill)" \
	eval '[[ $rc == 0 && -n $h ]] && wait_for gone "$pid"' || diag "$work/a1.err" "$work/crdbgd.log"
check "the metadata records alice as its owner" \
	grep -qx "owner $uid_a $gid_a" "/var/lib/crdbg/$h/metadata"
check "the metadata is sealed with the node's key (not a plain SHA-256)" \
	eval '! [[ $(head -n -1 "/var/lib/crdbg/$h/metadata" | sha256sum | cut -d" " -f1) == $(tail -n 1 "/var/lib/crdbg/$h/metadata" | cut -d" " -f2) ]]'
as alice timeout -k 10 300 "$crdbg" list >"$work/a.list" 2>&1
check "alice's list shows her checkpoint" grep -q "^$h " "$work/a.list" || diag "$work/a.list"
as bob timeout -k 10 300 "$crdbg" list >"$work/b.list" 2>&1
rc=$?
check "bob's list does not show it" eval '[[ $rc == 0 ]] && ! grep -q "$h" "$work/b.list"'
check "alice verifies it" eval 'as alice timeout -k 10 300 "$crdbg" verify "$h" | grep -qx "$h: ok"'
# her images are hers to read (copy), not to change: root's files, an ACL entry of hers
hd=/var/lib/crdbg/$h  # (check has a local d)
as alice sh -c 'cp -r "$1" "$2"' sh "$hd" "$work/alice/copy" >"$work/a.copy" 2>&1
rc=$?
check "alice copies her checkpoint's files" \
	eval '[[ $rc == 0 ]] && cmp -s "$hd/metadata" "$work/alice/copy/metadata" &&
	      [[ $(ls "$hd" | wc -l) == $(ls "$work/alice/copy" | wc -l) ]]' ||
	{ diag "$work/a.copy"; ls -la "$hd" "$work/alice/copy" 2>&1 | sed 's/^/# /' | head -n 12; }
as alice sh -c 'echo x >>"$1"' sh "$hd/metadata" >"$work/a.write" 2>&1
rcw=$?
as alice sh -c 'rm -f "$1"' sh "$hd/metadata" >"$work/a.rm" 2>&1
rcr=$?
check "... which stay root's: she can neither change nor remove one" \
	eval '[[ $(stat -c %u "$hd/metadata") == 0 && $rcw != 0 && $rcr != 0 ]] && test -e "$hd/metadata" &&
	      as alice timeout -k 10 300 "$crdbg" verify "$h" | grep -qx "$h: ok"' ||
	diag "$work/a.write" "$work/a.rm"
check "bob cannot read alice's checkpoint's files" \
	eval '! as bob cat "$hd/metadata" >/dev/null 2>&1 && ! as bob ls "$hd" >/dev/null 2>&1'
for cmd in verify rm restart; do
	as bob timeout -k 10 300 "$crdbg" $cmd "$h" >"$work/b.$cmd" 2>&1
	rc=$?
	check "bob cannot $cmd alice's checkpoint: one line" \
		eval '[[ $rc != 0 ]] && one_line "$work/b.$cmd" && grep -q "not yours" "$work/b.$cmd"' ||
		diag "$work/b.$cmd"
done
check "alice's checkpoint is still there" test -f "/var/lib/crdbg/$h/metadata"

: >"$work/alice/a1.out.restart"
as alice timeout -k 10 300 "$crdbg" restart "$h" >"$work/a1.rst" 2>&1 &
rpid=$!
check "alice restarts it: the process is back, as alice" wait_for back_as "$pid" "$uid_a" ||
	diag "$work/a1.rst"
as alice touch "$work/alice/go"
wait "$rpid"
rc=$?
check "alice's restart runs it to its end (exit 0, every step)" \
	eval '[[ $rc == 0 ]] && same_steps "$work/alice/a1.out"' || diag "$work/a1.rst" "$work/alice/a1.out"
as alice timeout -k 10 300 "$crdbg" rm "$h" >"$work/a.rm" 2>&1
rc=$?
check "alice removes her checkpoint" eval '[[ $rc == 0 ]] && ! test -e "/var/lib/crdbg/$h"' ||
	diag "$work/a.rm"

# --- the MPIR protocol between the service and alice's program ---
start alice a5 "$build/usr/libcrdbg.so"
as alice timeout -k 10 300 "$crdbg" checkpoint "$pid" --kill >"$work/a5.handle" 2>"$work/a5.err"
rc=$?
h5=$(tail -n 1 "$work/a5.handle")
check "alice's program with libcrdbg answers the service's checkpoint request (MPIR protocol)" \
	eval '[[ $rc == 0 ]] && grep -qx "mpir 1" "/var/lib/crdbg/$h5/metadata"' || diag "$work/a5.err"
as alice touch "$work/alice/go"
as alice timeout -k 10 300 "$crdbg" restart "$h5" >"$work/a5.rst" 2>&1
rc=$?
check "... and its restart through the service runs it to its end" \
	eval '[[ $rc == 0 ]] && same_steps "$work/alice/a5.out"' || diag "$work/a5.rst" "$work/alice/a5.out"
as alice timeout -k 10 300 "$crdbg" rm "$h5" >/dev/null 2>&1

# --- bob and alice's processes; trees that are not the caller's ---
start alice a2
as bob timeout -k 10 300 "$crdbg" checkpoint "$pid" >"$work/b.ckpt" 2>&1
rc=$?
check "bob cannot checkpoint alice's process: one line, and it was not frozen" \
	eval '[[ $rc != 0 ]] && one_line "$work/b.ckpt" && [[ $(state "$pid") != [Tt] ]]' ||
	diag "$work/b.ckpt"
for how in self pidfd; do
	as bob "$build/tests/daemon/prog_forge" "$sock" "$pid" "$how" >"$work/b.forge" 2>&1
	rc=$?
	check "bob's request for alice's pid with a proof of his own ($how) is refused by the service: one line" \
		eval '[[ $rc == 0 ]] && [[ $(wc -l <"$work/b.forge") == 1 ]] && grep -q refused "$work/b.forge" &&
		      [[ $(state "$pid") != [Tt] ]]' || diag "$work/b.forge"
done
sleep 1000 &
rootpid=$!
pids+=("$rootpid")
as alice timeout -k 10 300 "$crdbg" checkpoint "$rootpid" >"$work/a.root" 2>&1
rc=$?
check "alice cannot checkpoint root's process: one line" \
	eval '[[ $rc != 0 ]] && one_line "$work/a.root"' || diag "$work/a.root"
# a tree whose child is not dumpable: the service refuses it, naming the child
as alice setsid sh -c 'echo $$ >"$1"; /usr/bin/python3 -c "import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(1000)" & wait' \
	sh "$work/alice/nd.pid" </dev/null >/dev/null 2>&1 &
wait_for test -s "$work/alice/nd.pid"
ndpid=$(cat "$work/alice/nd.pid")
pids+=("$ndpid")
# the child has made itself not dumpable: the files of its /proc/PID are
# root's (the directory itself keeps the process's uid)
nd_child() { child=$(pgrep -P "$ndpid") && [[ $(stat -c %u "/proc/$child/mem") == 0 ]]; }
if wait_for nd_child; then
	as alice timeout -k 10 300 "$crdbg" checkpoint "$ndpid" >"$work/a.nd" 2>&1
	rc=$?
	check "a tree with a child that is not dumpable is refused, naming the child, nothing frozen" \
		eval '[[ $rc != 0 ]] && one_line "$work/a.nd" && grep -q "pid $child is not dumpable" "$work/a.nd" &&
		      [[ $(state "$ndpid") != [Tt] ]]' || diag "$work/a.nd"
else
	not_ok "a child of alice's made itself not dumpable (python3 prctl) within a minute"
fi
kill -9 "$ndpid" $(pgrep -P "$ndpid") 2>/dev/null

# --- the caller's environment never reaches root ---
cat >"$work/alice/evil" <<'EOF'
#!/bin/sh
touch "$(dirname "$0")/evil-ran"
exec /usr/sbin/criu "$@"
EOF
chmod 755 "$work/alice/evil"
chown alice: "$work/alice/evil"
as alice env CRDBG_STORE=/nonexistent "$crdbg" checkpoint "$pid" >"$work/a.env" 2>"$work/a.env.err"
rc=$?
check "a store the user names (CRDBG_STORE) that does not exist: one line, nothing done" \
	eval '[[ $rc != 0 ]] && one_line "$work/a.env.err" && [[ $(state "$pid") != [Tt] ]]' ||
	diag "$work/a.env.err"
as alice env CRDBG_CRIU="$work/alice/evil" PATH="$work/alice:/usr/bin:/bin" TMPDIR="$work/alice" \
	CRIU_LIBS_DIR="$work/alice" LD_LIBRARY_PATH="$work/alice" \
	timeout -k 10 300 "$crdbg" checkpoint "$pid" --kill >"$work/a.env" 2>"$work/a.env.err"
rc=$?
check "CRDBG_CRIU, PATH, TMPDIR, CRIU_LIBS_DIR of the caller reach no code of root's: root's own criu ran" \
	eval '[[ $rc == 0 ]] && ! test -e "$work/alice/evil-ran"' || diag "$work/a.env.err"

# --- a store that is not the caller's own ---
install -d -o bob -g bob -m 755 "$work/bob/store"
install -d -m 1777 "$work/shared"
for s in "$work/bob/store" "$work/shared" /etc; do
	as alice timeout -k 10 300 "$crdbg" list --store "$s" >"$work/a.store" 2>&1
	rc=$?
	check "alice cannot have root write into $s: one line" \
		eval '[[ $rc != 0 ]] && one_line "$work/a.store"' || diag "$work/a.store"
done
install -d -o alice -g alice -m 755 "$work/alice/store"
start alice a3
as alice timeout -k 10 300 "$crdbg" checkpoint "$pid" --kill --store "$work/alice/store" >"$work/a3.handle" 2>"$work/a3.err"
h3=$(tail -n 1 "$work/a3.handle")
check "alice checkpoints into a store of her own (handed over as a directory fd)" \
	test -f "$work/alice/store/.crdbgd/$h3/metadata" || diag "$work/a3.err"

# --- a forged criu-opt, re-sealed; a re-sealed one under the key ---
m=$work/alice/store/.crdbgd/$h3/metadata
reseal() { # FILE KEYHEX: the end line again, a SHA-256 without a key, an HMAC with one
	local body
	body=$(head -n -1 "$1")
	if [ -z "$2" ]; then
		printf '%s\nend %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$1"
	else
		printf '%s\nend %s\n' "$body" "$(printf '%s\n' "$body" |
			openssl dgst -sha256 -mac HMAC -macopt "hexkey:$2" -r | cut -d' ' -f1)" >"$1"
	fi
}
cp "$m" "$work/m.orig"
# whoever can write the store (a store on scratch space, a copy brought back)
sed -i "/^handle /a criu-opt --action-script=$work/alice/evil" "$m"
reseal "$m" ""
as alice timeout -k 10 300 "$crdbg" restart "$h3" --store "$work/alice/store" >"$work/a.forged" 2>&1
rc=$?
check "a metadata with a criu-opt added and re-sealed without the key is refused: the seal is keyed" \
	eval '[[ $rc != 0 ]] && grep -q "checksum mismatch" "$work/a.forged" && ! test -e "$work/alice/evil-ran"' ||
	diag "$work/a.forged"
reseal "$m" "$(od -An -tx1 "$key" | tr -d ' \n')"
as alice timeout -k 10 300 "$crdbg" restart "$h3" --store "$work/alice/store" >"$work/a.forged" 2>&1
rc=$?
check "... and even sealed with the key, the criu-opt is checked against the allow-list again" \
	eval '[[ $rc != 0 ]] && grep -q "action-script" "$work/a.forged" && ! test -e "$work/alice/evil-ran"' ||
	diag "$work/a.forged"
cp "$work/m.orig" "$m"

# --- images whose creds are root's, in a checkpoint that says it is alice's ---
# (under setsid: a tree in the guest init's session 0 is refused before any dump)
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
rootpid=$!
pids+=("$rootpid")
# until setsid(2) has run in it: checkpointed before, it is still in session 0
for _ in $(seq 100); do
	[ "$(awk '{ print $6 }' "/proc/$rootpid/stat" 2>/dev/null)" = "$rootpid" ] && break
	sleep 0.1
done
CRDBG_DIGEST=sha256 "$crdbg" checkpoint "$rootpid" --kill --store /var/lib/crdbg >"$work/r.handle" 2>"$work/r.err"
hr=$(tail -n 1 "$work/r.handle")
mr=/var/lib/crdbg/$hr/metadata
sed -i "s/^owner 0 0$/owner $uid_a $gid_a/" "$mr"
reseal "$mr" "$(od -An -tx1 "$key" | tr -d ' \n')"
as alice timeout -k 10 300 "$crdbg" restart "$hr" >"$work/a.creds" 2>&1
rc=$?
check "a checkpoint of alice's whose images would restore uid 0 is refused before criu restores" \
	eval '[[ $rc != 0 ]] && grep -q "uid that is not the owner" "$work/a.creds" && ! kill -0 "$rootpid" 2>/dev/null' ||
	diag "$work/r.err" "$work/a.creds"

# --- a symlink in a put-back path ---
install -d -m 700 /tmp/crdbg-rootonly.$$
install -d -o alice -g alice -m 755 "$work/alice/d"
d=$work/alice/d
rm -f "$work/alice/go"
as alice sh -c 'echo $$ >"$1"; exec env CKPT_GO="$2" setsid "$3" 1 "$4" "$5" >"$6" 2>&1 </dev/null' \
	sh "$work/alice/a4.pid" "$work/alice/go" "$prog" "$STEPS" "$NAP" "$d/out" &
wait_for has_line "$d/out" '^step 5$'
pid=$(cat "$work/alice/a4.pid")
pids+=("$pid")
as alice timeout -k 10 300 "$crdbg" checkpoint "$pid" --kill >"$work/a4.handle" 2>"$work/a4.err"
h4=$(tail -n 1 "$work/a4.handle")
wait_for gone "$pid"
# refused by the tmpfs put-back, or before it by the check of the files the
# program writes (its directory is no plain directory now): either way no write
as alice sh -c 'rm -rf "$1" && ln -s "$2" "$1"' sh "$d" /tmp/crdbg-rootonly.$$
as alice timeout -k 10 300 "$crdbg" restart "$h4" >"$work/a.link" 2>&1
rc=$?
check "the put-back of a tmpfs file follows no symlink the user swapped in" \
	eval '[[ $rc != 0 ]] && ! test -e /tmp/crdbg-rootonly.$$/out && grep -qE "symbolic links|not a plain directory" "$work/a.link"' ||
	diag "$work/a4.err" "$work/a.link"
rm -rf /tmp/crdbg-rootonly.$$

# --- a shell job of alice's, restarted by root on root's terminal ---
# Restored there, the terminal would be its controlling terminal, where it
# types (TIOCSTI) a command for the shell that reads the terminal next.
pty=$build/tests/crs/prog_pty
rm -f "$work/alice/go"
as alice env PTY_PIDFILE="$work/alice/sj.sh" "$pty" "$work/alice/sj.log" bash -c \
	'/usr/bin/python3 -c "
import fcntl, os, sys, termios, time
open(sys.argv[1], \"w\").write(str(os.getpid()))
while not os.path.exists(sys.argv[2]):
    time.sleep(0.2)
for c in b\"touch $3\\n\":
    fcntl.ioctl(1, termios.TIOCSTI, bytes([c]))
" "$1" "$2" </dev/null & wait' bash "$work/alice/sj.pid" "$work/alice/go" "$work/typed" \
	</dev/null >/dev/null 2>&1 &
wait_for test -s "$work/alice/sj.pid"
sj=$(cat "$work/alice/sj.pid")
pids+=("$sj")
as alice timeout -k 10 300 "$crdbg" checkpoint "$sj" --kill >"$work/sj.handle" 2>"$work/sj.err"
hs=$(tail -n 1 "$work/sj.handle")
wait_for gone "$sj"
touch "$work/alice/go"
# root's shell: the restart, then what it reads from its terminal, run
"$pty" "$work/root-tty.log" bash -c '"$1" restart "$2" --store /var/lib/crdbg; read -r -t 15 line && eval "$line"' \
	bash "$crdbg" "$hs" </dev/null >/dev/null 2>&1
check "alice's shell job restarted by root on root's terminal is refused in one line, nothing restored" \
	eval '[[ -n $hs ]] && grep -q "TIOCSTI" "$work/root-tty.log" &&
	      [[ $(grep -c . "$work/root-tty.log") == 1 ]] && ! kill -0 "$sj" 2>/dev/null' ||
	diag "$work/sj.err" "$work/root-tty.log"
check "... and typed nothing into root's shell" eval '! test -e "$work/typed"'
as alice timeout -k 10 300 "$crdbg" rm "$hs" >/dev/null 2>&1

# --- a request that is not what it says ---
check "crdbgd survived every refusal" kill -0 "$dpid"
echo "1..$n"
exit $((failed > 0))
