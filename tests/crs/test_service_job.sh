#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A user's job checkpoints through the node's service (guest, a writable
# root). alice runs the job's coordinator (crdbg checkpoint --job, restart,
# list, verify, rm); each of its parts, crdbg-part run as alice, hands its
# stdio to crdbgd, which speaks the part protocol for it as root, once the
# kernel's checks say the tree is hers:
#
#   crdbg (alice) --pipe--> crdbg-part (alice) --unix socket, fds--> crdbgd (root) --> criu
#
# Her manifest lives in a store of her own; the parts, root's, in the
# store's .crdbgd. bob can do nothing with either. Argument: the backend.
set -u
. "$(dirname "$0")/lib.sh" service-job "$@"
. "$(dirname "$0")/service-lib.sh"

store=$work/alice/store
as alice mkdir -m 700 "$store"
jcrdbg() { as alice timeout -k 10 300 "$crdbg" "$@" --store "$store"; }

# --- no store of her own: refused before anything is frozen ---
start alice j0
as alice timeout -k 10 300 "$crdbg" checkpoint --job "$pid" >"$work/j0.out" 2>"$work/j0.err"
rc=$?
check "a job checkpoint of alice's into the node's store: one line naming the store, nothing frozen" \
	eval '[[ $rc != 0 ]] && one_line "$work/j0.err" && grep -q "store of your own" "$work/j0.err" &&
	      [[ $(state "$pid") != [Tt] ]]' ||
	diag "$work/j0.err"
kill -9 "$pid"

# --- a job of two trees, checkpointed and killed ---
start alice j1
p1=$pid
start alice j2
p2=$pid
jcrdbg checkpoint --job "$p1,$p2" --kill >"$work/job.handle" 2>"$work/job.err"
rc=$?
jh=$(tail -n 1 "$work/job.handle")
check "alice checkpoints her job of two trees through the service (--kill)" \
	eval '[[ $rc == 0 && $jh == job-* ]] && wait_for gone "$p1" && wait_for gone "$p2"' ||
	diag "$work/job.err" "$work/crdbgd.log"
parts=$(sed -n 's/^part [0-9]* [^ ]* [^ ]* \([^ ]*\) .*/\1/p' "$store/.jobs/$jh" 2>/dev/null)
check "its manifest is hers, in her store; its two parts are root's, in the store's .crdbgd" \
	eval '[[ $(stat -c %U "$store/.jobs/$jh") == alice && $(wc -w <<<"$parts") == 2 ]] &&
	      for h in $parts; do [[ $(stat -c %U "$store/.crdbgd/$h/metadata") == root ]] || exit 1; done' ||
	diag "$store/.jobs/$jh"
check "each part's metadata records alice as its owner, sealed with the node's key" \
	eval 'for h in $parts; do m=$store/.crdbgd/$h/metadata
		grep -qx "owner $uid_a $gid_a" "$m" &&
		! [[ $(head -n -1 "$m" | sha256sum | cut -d" " -f1) == $(tail -n 1 "$m" | cut -d" " -f2) ]] ||
		exit 1; done'
jcrdbg list >"$work/j.list" 2>&1
check "alice's list shows her job" grep -q "$jh" "$work/j.list" || diag "$work/j.list"
check "alice verifies her job: every part, on its node, through the service" \
	eval 'jcrdbg verify "$jh" 2>&1 | grep -qx "$jh: ok"'

# --- bob: nothing of hers, even in a store he may read ---
as alice chmod 755 "$store"
for cmd in restart verify rm; do
	as bob timeout -k 10 300 "$crdbg" $cmd "$jh" --store "$store" >"$work/b.$cmd" 2>&1
	rc=$?
	check "bob cannot $cmd alice's job: one line" \
		eval '[[ $rc != 0 ]] && one_line "$work/b.$cmd"' || diag "$work/b.$cmd"
done
# a part of hers asked for directly, with her store's fd: the service
# takes a store only from its owner
h1=$(set -- $parts; echo "$1")
as bob timeout -k 10 300 "$build/sdm/crdbg-part" restart "$h1" --store "$store" --node-roots - \
	</dev/null >"$work/b.part" 2>&1
check "bob's restart part of alice's part is refused by the service, in the part protocol" \
	eval 'grep -q "^crdbg-part failed errno=" "$work/b.part" && ! grep -q "^crdbg-part restored" "$work/b.part" &&
	      test -e "$store/.crdbgd/$h1/metadata"' || diag "$work/b.part"
as alice chmod 700 "$store"

# --- her restart: both trees back, as alice, to their end ---
rm -f "$work/alice/go"
jcrdbg restart "$jh" >"$work/j.rst" 2>&1 &
rpid=$!
check "alice restarts her job: both trees are back, as alice" \
	eval 'wait_for back_as "$p1" "$uid_a" && wait_for back_as "$p2" "$uid_a"' ||
	diag "$work/j.rst" "$work/crdbgd.log"
as alice touch "$work/alice/go"
wait "$rpid"
rc=$?
check "her job's restart runs both trees to their end (exit 0, every step)" \
	eval '[[ $rc == 0 ]] && same_steps "$work/alice/j1.out" && same_steps "$work/alice/j2.out"' ||
	diag "$work/j.rst" "$work/alice/j1.out"
# a worker ended by a signal mid-request (held at the part's first
# step, waiting for its order): the part says so, the log names it
mkfifo "$work/alice/orders"
chown alice "$work/alice/orders"
as alice sh -c 'exec 3<>"$1"; exec "$2" restart "$3" --store "$4" --node-roots - <"$1" >"$5" 2>&1' \
	sh "$work/alice/orders" "$build/sdm/crdbg-part" "$h1" "$store" "$work/alice/w.out" &
wpart=$!
wait_for grep -q "^crdbg-part verified" "$work/alice/w.out"
kill -9 $(pgrep -P "$dpid") 2>/dev/null
wait "$wpart"
check "a worker killed mid-request: its part fails in one line of the protocol, crdbgd's log names it" \
	eval 'grep -q "^crdbg-part failed errno=.*closed the connection without an answer" "$work/alice/w.out" &&
	      grep -q "worker of a request (pid [0-9]*) was ended by signal 9" "$work/crdbgd.log"' ||
	diag "$work/alice/w.out" "$work/crdbgd.log"
jcrdbg rm "$jh" >"$work/j.rm" 2>&1
rc=$?
check "alice removes her job: its manifest and both parts" \
	eval '[[ $rc == 0 ]] && ! test -e "$store/.jobs/$jh" &&
	      for h in $parts; do ! test -e "$store/.crdbgd/$h" || exit 1; done' || diag "$work/j.rm"

# --- the console: her MPI job checkpointed twice, back to the first ---
mpi=$build/tests/debug/mpi_debug
block() { printf 'echo === stacks %s\nstacks\nprint rank\nprint $pc\nprint $sp\necho === end\n' "$1"; }
part_of() { awk -v k="=== stacks $2" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$1" |
	sed 's/\$[0-9]* = /$ = /'; }
{
	printf 'break compute\ncontinue\n'
	block 1
	printf 'checkpoint\nbreak MPI_Barrier\ncontinue\ncheckpoint\nrestart 1\n'
	block 3
	printf 'continue\ncontinue\nquit\n'
} >"$work/alice/console"
if [[ -x $mpi ]] && command -v mpirun >/dev/null; then
	as alice env CRDBG_STORE="$store" OMPI_MPIR_DO_NOT_WARN=1 timeout -k 10 900 "$crdbg" debug \
		--preload "$build/usr/libcrdbg.so" --batch "$work/alice/console" \
		-- mpirun -n 2 --oversubscribe --mca btl self,vader \
		--mca btl_vader_single_copy_mechanism none "$mpi" >"$work/c.out" 2>"$work/c.err"
	rc=$?
	part_of "$work/c.out" 1 >"$work/c1"
	part_of "$work/c.out" 3 >"$work/c3"
	handles=$(sed -n 's/.*MPIR checkpoint handle) //p' "$work/c.out")
	check "alice's console session (checkpoint twice, restart 1) exits 0" test "$rc" = 0 ||
		diag "$work/c.out" "$work/c.err"
	check "... two job checkpoints in her store, each part hers, kept by root" \
		eval '[[ $(wc -w <<<"$handles") == 2 ]] && for jh in $handles; do
			p=$(awk '"'"'$1 == "part" { print $5 }'"'"' "$store/.jobs/$jh") &&
			[[ -n $p ]] && grep -qx "owner $uid_a $gid_a" "$store/.crdbgd/$p/metadata" || exit 1
		done' || diag "$work/c.out"
	check "... after restart 1, stacks, rank, pc and sp are those of the first checkpoint" \
		eval 'grep -q compute "$work/c1" && cmp -s "$work/c1" "$work/c3"' ||
		diff "$work/c1" "$work/c3" | sed 's/^/# /'
	after=$(sed -n '/=== stacks 3/,$p' "$work/c.out")
	check "... and the restarted ranks stop again at MPI_Barrier, then end with the right output" \
		eval 'grep -q "stopped: breakpoint .*MPI_Barrier" <<<"$after" &&
		      [[ $(grep -c "mpi rank 0 of 2 value 4" <<<"$after") == 1 ]] &&
		      grep -q "exited: code 0" <<<"$after"' || diag "$work/c.out"
	check "... and nothing in it was refused or failed" \
		eval '! grep -Eq "cannot|could not|not back|no handle|error|refused|lost" "$work/c.out" "$work/c.err"' ||
		grep -E "cannot|could not|not back|no handle|error|refused|lost" "$work/c.out" "$work/c.err" | diag -
else
	for t in exit handles restart1 end errors; do
		skip "alice's console session: $t" "needs mpirun and $mpi (make deps; make)"
	done
fi

check "crdbgd survived every request" kill -0 "$dpid"
echo "1..$n"
exit $((failed > 0))
