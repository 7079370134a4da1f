#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Job checkpoints of a job across nodes, on the namespaced cluster of
# scripts/cluster inside the guest (one kernel: crdbg.ko and CRIU work;
# every node its own network, PID and mount namespace). Argument: the
# freeze backend, ptrace or kmod. TAP on stdout.
#
# The job is tests/cluster/prog_ring: srun -N3 -n6 -m cyclic, rank r on
# node r%3, every rank connected by TCP to the next, so every link of the
# ring crosses nodes and carries a message every iteration. Each rank
# stops in iteration 4 between its send and its receive (the message in
# the sockets) until a go file exists: the cut is taken there.
#
#   a. checkpoint --job slurm:ID --kill; restart JOB in salloc, three
#      times: every rank ends as an uninterrupted run.
#   e. restart JOB --debug from a fresh shell: one marker per rank, with
#      its node and node-local pid.
#   b. a flipped byte in node1's part, node2's part missing, an
#      allocation without node2: refused naming the node, nothing runs.
#   c. a part of another job (foreign CID): rejected at the barrier.
#   f. the console: salloc -N3 crdbg debug --preload ... -- srun ...;
#      a breakpoint, `checkpoint` (one job checkpoint, a part per rank on
#      its node), `kill`, `restart`: the same stacks, rank 0's stdin (srun's
#      pipe before) is /dev/null and `input` says srun is gone, and
#      `continue` ends every rank as the uninterrupted run, each first
#      writing 8000 lines to stderr, which now reach the console through
#      the restart's coordinator (a full pipe there would block them).
#   m. Open MPI's mpirun inside salloc -N3 -n6 (its orteds started by
#      srun, two ranks of tests/crs/prog_mpi on each node): checkpoint
#      by mpirun's pid with --kill (the whole Slurm job), restart in a
#      new allocation: every rank ends as the uninterrupted run.
#   h. the same with MPICH's mpiexec.hydra and its hydra_pmi_proxys.
#   p. srun --mpi=pmix direct launch: refused before the freeze, in one
#      line; nothing kept, the job runs to its end.
#   l. Debian's LAMMPS under mpirun inside salloc, checkpointed mid-run
#      and restarted three times from that checkpoint: each log's thermo
#      lines are an uninterrupted run's.
#   d. node2 killed in the cut: nothing kept anywhere, the
#      ranks on node0 and node1 thawed (they run into the broken ring and
#      end), and nothing hangs. Last: the cluster has lost a node.
#
# Each step is a function (step_a ... step_l) over the ring helpers
# (ring_start, ring_at_wait, ring_snapshot, ring_rewind,
# ring_same_as_plain) or the launchers' (mpi_start, launcher_step), run
# after the uninterrupted run; JOBCLUSTER_STEPS picks them (default
# "a e b c f d"; "m h p l" in guest group clusterlaunch; e, b and c need
# a's job; d leaves a node lost: last; the plan counts the steps run),
# JOBCLUSTER_RESTARTS sets a's number of restarts. A step still running
# after its time leaves a snapshot of every node's processes and kernel
# stacks in the results (snap_if_slow).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
backend=${1:?usage: test_job_cluster.sh ptrace|kmod}
# The checks of each step (a's with its default three restarts), the
# plan of the steps run: a, e, b, c, f and d by default (guest group
# clusterjob); m, h, p and l, the launchers' jobs, are group clusterlaunch's.
declare -A step_checks=([a]=8 [e]=1 [b]=3 [c]=1 [f]=9 [m]=5 [h]=5 [p]=3 [l]=4 [d]=4)
steps=${JOBCLUSTER_STEPS:-a e b c f d}
plan=1
for step in $steps; do
	[[ -n ${step_checks[$step]:-} ]] || { echo "test_job_cluster.sh: no step '$step'" >&2; exit 2; }
	plan=$((plan + step_checks[$step]))
done

if [[ ${2:-} != --inside ]]; then
	. "$top/tests/guest/tap.sh"
	echo "1..$plan"
	why=""
	command -v slurmctld >/dev/null || why="slurm-wlm not installed (make deps)"
	command -v criu >/dev/null || why="criu not installed (make deps)"
	[[ -x $build/tests/cluster/prog_ring ]] || why="$build/tests/cluster/prog_ring not built (make)"
	if [[ -n $why ]]; then
		for i in $(seq $plan); do skip "job checkpoint on the ns cluster" "$why"; done
		exit 0
	fi
	dir=$(mktemp -d /tmp/crdbg-jobcluster.XXXXXX)
	chmod 755 "$dir"
	start=$(date +%s)
	CRDBG_BUILD=$build "$top/scripts/cluster" --kind ns --nodes 3 --timeout 2400 \
		--dir "$dir/c" -- "$0" "$backend" --inside 2>"$dir/cluster.err"
	rc=$?
	echo "# $backend: cluster and scenario $(($(date +%s) - start)) s, exit $rc"
	((rc == 0)) || diag "$dir/cluster.err"
	rm -rf "$dir"
	exit $rc
fi

# From here on: the login node of the cluster (its head namespace).
. "$top/tests/guest/tap.sh"
# check, but false on a failure, for the diagnostics after it.
check() { local t=$1; shift; if "$@"; then ok "$t"; else not_ok "$t"; return 1; fi; }
DIAG_LINES=40
# On a failure the ring's files, the parts' metadata and CRIU's logs go to
# the results (the guest's /tmp goes with it), with the restore logs a
# failed restart keeps in its work directory (every node's /tmp is the
# guest's).
save_work() {
	((failed)) && [[ -n ${CRDBG_RESULTS:-} ]] &&
		tar -C "$CRDBG_CLUSTER_DIR" -czf "$CRDBG_RESULTS/job-cluster-$backend-work.tgz" \
			--exclude='pages-*.img' ring log 2>/dev/null
	((failed)) && [[ -n ${CRDBG_RESULTS:-} ]] && compgen -G '/tmp/crdbg-restore-*/restore.log' >/dev/null &&
		(cd /tmp && tar -czf "$CRDBG_RESULTS/job-cluster-$backend-restore-logs.tgz" \
			crdbg-restore-*/restore.log 2>/dev/null)
	kill_rings
	[[ -n ${srun_pid:-} ]] && kill -9 "$srun_pid" 2>/dev/null
}
trap save_work EXIT
crdbg=$build/crdbg
prog=$build/tests/cluster/prog_ring
lib=$build/usr/libcrdbg.so
d=$CRDBG_CLUSTER_DIR/ring
S=$d/store
iters=8 wait_at=4
addrs="10.20.0.10 10.20.0.11 10.20.0.12 10.20.0.10 10.20.0.11 10.20.0.12"
ranks="0 1 2 3 4 5"
mkdir -p "$d"

has_line() { grep -q -- "$2" "$1" 2>/dev/null; }
one_line_error() { # OUT CMD...: non-zero, one "crdbg:" line last on stderr
	local out=$1 rc
	shift
	"$@" 2>"$out" >/dev/null </dev/null
	rc=$?
	[[ $rc != 0 ]] && tail -n 1 "$out" | grep -q '^crdbg:'
}
reseal() { # FILE: a manifest edited by hand, sealed again as crdbg would
	local body
	body=$(sed '$d' "$1")
	printf '%s\nend %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$1"
}
rings_left() { pgrep -f "^$prog " >/dev/null; }	# any rank of ours, on any node
kill_rings() { local p; for p in $(pgrep -f "^$prog "); do kill -9 "$p"; done; }
sec() { echo "# $backend: $1 $(($(date +%s) - t0)) s"; }

# ring_start NAME [ENV...]: the six ranks of job NAME, each writing
# $d/NAME.R.out and .err, waiting at iteration $wait_at for $d/NAME.go
# ($RING_SRUN: more srun options).
ring_start() {
	local name=$1
	shift
	srun -N3 -n6 -m cyclic --mpi=none ${RING_SRUN:-} -J "ring-$name" --quiet sh -c \
		"exec env RING_GO=$d/$name.go $* LD_PRELOAD=$lib $prog $iters $wait_at $addrs \
		>$d/$name.\$SLURM_PROCID.out 2>$d/$name.\$SLURM_PROCID.err </dev/null" \
		>"$d/$name.srun" 2>&1 &
	srun_pid=$!
	disown "$srun_pid"
}
ring_jobid() { squeue -h -n "ring-$1" -o %i | head -n 1; }
ring_at_wait() { local r; for r in $ranks; do has_line "$d/$1.$r.out" "^wait $wait_at\$" || return 1; done; }
ring_snapshot() { # CRIU checks an open file's size: the outputs go back to the cut
	local r
	for r in $ranks; do cp "$d/$1.$r.out" "$d/$1.$r.at"; cp "$d/$1.$r.err" "$d/$1.$r.errat"; done
}
ring_rewind() {
	local r
	rm -f "$d/$1.go"
	for r in $ranks; do cp "$d/$1.$r.at" "$d/$1.$r.out"; cp "$d/$1.$r.errat" "$d/$1.$r.err"; done
}
# Each rank's pid, ppid, pgid and sid as its node sees them (the last
# field of NSpid, NSpgid, NSsid; the parent's NSpid), one line a rank.
node_ids() {
	local p pp
	for p in $(pgrep -f "^$prog "); do
		pp=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status")
		awk -v pp="$(awk '/^NSpid:/ { print $NF }' "/proc/$pp/status" 2>/dev/null)" '
			/^NSpid:/ { pid = $NF } /^NSpgid:/ { pgid = $NF } /^NSsid:/ { sid = $NF }
			END { print pid, pp, pgid, sid }' "/proc/$p/status"
	done | sort -n
}
ring_unchanged() { local r; for r in $ranks; do cmp -s "$d/$1.$r.at" "$d/$1.$r.out" || return 1; done; }
ring_same_as_plain() {
	local r
	for r in $ranks; do
		has_line "$d/plain.$r.out" "^done rank $r " && cmp -s "$d/plain.$r.out" "$d/$1.$r.out" ||
			return 1
	done
}
wait_long() { # CMD...: true once CMD is, false after 6 minutes
	local end=$((SECONDS + 360))
	while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
	return 1
}
manifest() { echo "$S/.jobs/$1"; }
tcp_ok() { # JOB: every part took its two connections, both to other nodes
	local k h
	for k in $ranks; do
		h=$(part_field "$1" "$k" 5)
		[[ $(ls "$S/$h"/tcp-stream-*.img 2>/dev/null | wc -l) == 2 ]] || return 1
		[[ $(part_field "$1" "$k" 3) == node$(($(part_field "$1" "$k" 4) % 3)) ]] ||
			return 1
	done
}
# snap_if_slow SECONDS NAME (in the background): a step still running
# after SECONDS leaves every node's processes, their states and kernel
# stacks in the results, to see where it hangs.
snap_if_slow() {
	local out=${CRDBG_RESULTS:-$d}/job-cluster-$backend-$2-slow.txt p
	sleep "$1"
	{
		echo "== still running after $1 s"
		ps -eo pid,ppid,stat,wchan:32,etimes,args
		for p in $(pgrep -f 'crdbg|criu|prog_ring|srun|slurmstepd'); do
			echo "== $p: $(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)"
			cat "/proc/$p/stack" 2>/dev/null
		done
	} >"$out" 2>&1
}
part_field() { awk -v k="$2" -v f="$3" '$1 == "part" && $2 == k { print $f }' "$(manifest "$1")"; }
part_of_node() { awk -v n="$2" '$1 == "part" && $3 == n { print $2; exit }' "$(manifest "$1")"; }

# step_a: one cut over the six ranks, in the message exchange; --kill;
# then three restarts. Sets $job for the steps after it.
step_a() {
	ring_start a
	wait_long ring_at_wait a
	ring_snapshot a
	node_ids >"$d/a.ids.before"
	jobid=$(ring_jobid a)
	t0=$(date +%s)
	job=$(timeout 900 "$crdbg" checkpoint --job "slurm:$jobid" --kill --store "$S" \
		--backend "$backend" -v 2>"$d/a.ckpt.err")
	sec "checkpoint --job of 6 ranks"
	check "checkpoint --job slurm:ID --kill: one handle, 6 parts, the job ended" ckpt_ok ||
		diag "$d/a.ckpt.err"
	check "... each part on its rank's node holds its two TCP connections" tcp_ok "$job" ||
		{ ls "$S"/* | head -n 40 | sed 's/^/# /'; diag "$(manifest "$job")"; }
	check "... no part released its ranks before every part was dumped" \
		released_after_all_dumped ||
		grep -E "dumped|resume pid" "$d/a.ckpt.err" | diag -
	for i in $(seq "${JOBCLUSTER_RESTARTS:-3}"); do
		t0=$(date +%s)
		check "restart $i of the job in salloc: all 6 back, released, every rank ends as the uninterrupted run" \
			restart_ok "$d/restart$i.log" "$i" ||
			{ diag "$d/restart$i.log"; diag "$d/a.0.out" "$d/a.0.err"; }
		sec "restart $i"
		((i == 1)) || continue
		echo "# node-local pid ppid pgid sid before: $(paste -sd, "$d/a.ids.before"); after: $(paste -sd, "$d/a.ids.after")"
		check "... every rank back with its node's pid, ppid (slurmstepd's), pgid (the node's first task's) and sid" \
			eval '[[ $(wc -l <"$d/a.ids.before") == 6 ]] && cmp -s "$d/a.ids.before" "$d/a.ids.after"'
	done
	check "... no rank left on any node" eval '! rings_left'
}
ckpt_ok() {
	[[ -n $job && -f $(manifest "$job") ]] &&
		[[ $(grep -c '^part ' "$(manifest "$job")") == 6 ]] &&
		wait_long gone "$srun_pid" && ! rings_left
}
released_after_all_dumped() { # no rank runs again before every part is dumped
	awk '/every part is dumped \(6 parts\): releasing/ { seen = 1 }
	     /crdbg: resume pid/ { resumed++; if (!seen) early = 1 }
	     END { exit !(seen && resumed >= 6 && !early) }' "$d/a.ckpt.err"
}
restart_ok() { # LOG [N]: one restart in an allocation of the three nodes
	local rc snap rst log=$1
	ring_rewind a
	# found by the ranks once released; the first restart looks at them first
	[[ ${2:-} == 1 ]] || touch "$d/a.go"
	snap_if_slow 240 "$(basename "$1" .log)" &
	snap=$!
	timeout 900 salloc -N3 --quiet "$crdbg" restart "$job" --store "$S" \
		--backend "$backend" --timeout 600 -v >"$d/restart.out" 2>"$1" </dev/null &
	rst=$!
	if [[ ${2:-} == 1 ]]; then
		wait_long eval 'grep -q "every part of $job is back" "$log"' &&
			wait_long eval '[[ $(pgrep -f "^$prog " | wc -l) == 6 ]]'
		node_ids >"$d/a.ids.after"
		touch "$d/a.go"
	fi
	wait "$rst"
	rc=$?
	kill "$snap" 2>/dev/null
	((rc == 0)) && ring_same_as_plain a &&
		grep -q "every part of $job is back (computation .*, 6 parts): releasing" "$1"
}

# step_e: --debug from a fresh shell: one marker per rank, node-local pids.
step_e() {
	t0=$(date +%s)
	check "restart --debug from a fresh shell prints one MPIR debug info node:pid marker per rank" \
		markers_ok || { diag "$d/debug.err"; expected_markers | diag -; }
	sec "restart --debug"
	wait_long eval '! rings_left'
}
expected_markers() {
	local k h
	for k in $ranks; do
		h=$(part_field "$job" "$k" 5)
		echo "MPIR debug info) $(part_field "$job" "$k" 3):$(awk '$1 == "process" { print $2; exit }' "$S/$h/metadata")"
	done | sort
}
markers_ok() {
	local sp
	ring_rewind a
	env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" setsid salloc -N3 --quiet \
		"$crdbg" restart "$job" --store "$S" --backend "$backend" --debug \
		>/dev/null 2>"$d/debug.err" </dev/null &
	sp=$!
	wait_long eval '[[ $(grep -c "^MPIR debug info) " "$d/debug.err") -ge 6 ]] || gone $sp'
	grep "^MPIR debug info) " "$d/debug.err" | sort >"$d/debug.markers"
	kill_rings	# parked for a debugger: end them
	wait_long gone "$sp"
	expected_markers | cmp -s - "$d/debug.markers"
}

# step_b: a damaged or missing part, or an allocation without a part's
# node: refused before anything runs, naming it.
step_b() {
	local k1 h1 k2 h2 img byte
	k1=$(part_of_node "$job" node1)
	h1=$(part_field "$job" "$k1" 5)
	cp -a "$S/$h1" "$d/h1.bak"
	img=$(ls "$S/$h1"/pages-*.img | head -n 1)
	byte=$(od -An -tu1 -j100 -N1 "$img" | tr -d ' ')
	printf "\\x$(printf %02x $((255 - byte)))" | dd of="$img" bs=1 seek=100 conv=notrunc status=none
	t0=$(date +%s)
	check "a flipped byte in node1's part: refused before anything runs, naming node1" \
		refused_ok "is corrupt" node1 "$k1" "$d/corrupt.err" || diag "$d/corrupt.err"
	sec "corrupt part"
	rm -rf "${S:?}/$h1" && cp -a "$d/h1.bak" "$S/$h1"
	k2=$(part_of_node "$job" node2)
	h2=$(part_field "$job" "$k2" 5)
	mv "$S/$h2" "$d/h2.away"
	check "node2's part missing: refused before anything runs, naming node2" \
		refused_ok "" node2 "$k2" "$d/missing.err" || diag "$d/missing.err"
	mv "$d/h2.away" "$S/$h2"
	check "an allocation without node2: refused before any part starts, naming node2's part" \
		alloc_refused "$k2" "$d/alloc.err" || diag "$d/alloc.err"
}
alloc_refused() { # K LOG: a restart in salloc -w node0,node1
	one_line_error "$2" timeout 600 salloc -N2 -w node0,node1 --quiet "$crdbg" restart "$job" \
		--store "$S" --backend "$backend" &&
		grep -q "refused, nothing was restored: part $1 (ranks [^)]*) was checkpointed on node2, which is not a node of this allocation" "$2" &&
		! rings_left && ring_unchanged a
}
refused_ok() { # WHAT NODE K LOG
	ring_rewind a
	touch "$d/a.go"
	one_line_error "$4" timeout 600 salloc -N3 --quiet "$crdbg" restart "$job" --store "$S" \
		--backend "$backend" &&
		grep -q "refused, nothing was restored: $2 (part $3, .*$1" "$4" &&
		! rings_left && ring_unchanged a
}

# step_c: a part of another job: a one-rank ring on node2, checkpointed on
# its own, put in the place of node2's part in a re-sealed copy of the
# manifest.
step_c() {
	local other_srun other forged
	k2=$(part_of_node "$job" node2)
	srun -N1 -n1 -w node2 --mpi=none -J ring-other --quiet sh -c \
		"exec env RING_GO=$d/other.go RING_PORT=7400 LD_PRELOAD=$lib $prog $iters $wait_at 10.20.0.12 \
		>$d/other.0.out 2>$d/other.0.err </dev/null" >"$d/other.srun" 2>&1 &
	other_srun=$!
	disown "$other_srun"
	wait_long has_line "$d/other.0.out" "^wait $wait_at\$"
	other=$(timeout 600 "$crdbg" checkpoint --job "slurm:$(ring_jobid other)" --kill --store "$S" \
		--backend "$backend" 2>"$d/other.ckpt.err")
	wait_long gone "$other_srun"
	forged=job-forged-$backend
	sed -e "s/^handle .*/handle $forged/" \
		-e "s/^\(part $k2 node2 [^ ]*\) .*/\1 $(part_field "$other" 0 5) $(part_field "$other" 0 6)/" \
		"$(manifest "$job")" >"$(manifest "$forged")"
	reseal "$(manifest "$forged")"
	t0=$(date +%s)
	check "a part of another job (foreign CID) is rejected at the barrier, the held ranks killed" \
		foreign_ok "$forged" || { diag "$d/other.ckpt.err"; diag "$d/foreign.err"; }
	sec "foreign part"
}
foreign_ok() { # FORGED
	ring_rewind a
	touch "$d/a.go"
	one_line_error "$d/foreign.err" timeout 600 salloc -N3 --quiet "$crdbg" restart "$1" \
		--store "$S" --backend "$backend" &&
		grep -q "node2 (part $k2.* belongs to computation .*, not $(sed -n 's/^cid //p' "$(manifest "$job")")" \
			"$d/foreign.err" &&
		wait_long eval '! rings_left' && ring_unchanged a
}

# step_f: the console. A debug session of the ring inside salloc (srun
# launches it under MPIR; one crdbg-server per node, each rank's gdb on
# its node). All six stop at ring_step in iteration 3; `checkpoint` takes
# every rank as a part of one job checkpoint on its node, `continue`
# runs the job on to the next iteration (each rank's output file grows
# past the checkpoint), and `restart`, with no `kill` first, checks every
# part, ends the ranks, waits for their pids and brings the job back
# through the barrier under the same gdbs, each rank's file put back as
# at the checkpoint. The ranks write their stdout to files of their own
# (RING_OUT): a restarted rank no longer has srun's pipes. srun forwards the console's
# input to rank 0 through a pipe of slurmstepd; srun is no part of the
# image, and the restarted rank 0 reads /dev/null instead (lseek() on it
# works, on the pipe it failed), never its part's order channel.
step_f() {
	local cjob snap
	console_script >"$d/f.script"
	touch "$d/f.go"	# they pass iteration 4's wait (and print it, as the plain run)
	t0=$(date +%s)
	snap_if_slow 900 console &
	snap=$!
	CRDBG_STORE=$S CRDBG_BACKEND=$backend RING_GO=$d/f.go RING_OUT=$d/f RING_CHATTY=8000 \
		timeout 1200 salloc -N3 -n6 --quiet "$crdbg" debug --preload "$lib" \
		--batch "$d/f.script" -- srun --mpi=none -N3 -n6 -m cyclic \
		"$prog" $iters $wait_at $addrs >"$d/f.console" 2>&1 </dev/null
	kill "$snap" 2>/dev/null
	sec "console session (checkpoint, kill, restart, continue)"
	check "console: srun -N3 -n6 under crdbg debug in salloc: all 6 ranks stop at ring_step" \
		eval '[[ $(stacks_of before | tr -s " ") == "[0-5] main"*"[0-5] ring_step"* ]]' ||
		diag "$d/f.console"
	cjob=$(sed -n 's/^MPIR checkpoint handle) //p' "$d/f.console" | tail -n 1)
	check "... checkpoint: one job handle, a part per rank on its node with its two TCP connections" \
		eval '[[ -n $cjob && -f $(manifest "$cjob") &&
		        $(grep -c "^part " "$(manifest "$cjob")") == 6 ]] && tcp_ok "$cjob"' ||
		{ grep -E 'checkpoint|^crdbg' "$d/f.console" | diag -; }
	check "... continue, restart with no kill: every rank back, stacks identical to before" \
		eval '[[ -n $(stacks_of after) && "$(stacks_of after)" == "$(stacks_of before)" ]]' ||
		{ stacks_of before | diag -; grep -A 30 '^(crdbg) restart' "$d/f.console" | diag -; }
	check "... each rank's output file put back, what it wrote after the checkpoint kept aside" \
		eval '[[ $(ls "$d"/f.[0-5].out.crdbg-after-* 2>/dev/null | wc -l) == 6 ]] &&
		      grep -q "^iter " "$d"/f.0.out.crdbg-after-*' ||
		ls "$d" | diag -
	check "... rank 0's stdin: srun's pipe before (lseek fails), /dev/null after the restart" \
		eval '[[ $(lseek_of before) == "-1" && $(lseek_of after) == "0" ]]' ||
		grep -B 2 -A 3 'lseek' "$d/f.console" | diag -
	check "... input after the restart: one line saying srun is gone and stdin is /dev/null" \
		grep -q "input: srun ended at the restart .*rank 0's stdin is /dev/null" "$d/f.console" ||
		grep -A 3 '^(crdbg) input' "$d/f.console" | diag -
	check "... continue: every rank ends as the uninterrupted run" \
		eval 'grep -q "^\[0-5\]: exited: code 0" "$d/f.console" && ring_same_as_plain f' ||
		{ diag "$d/f.0.out"; tail -n 20 "$d/f.console" | diag -; }
	# Through each rank's part on its node and that node's server: labelled with the rank.
	check "... the restarted ranks' stderr (8000 lines each, more than the pipes hold) comes through the console whole, each line under its rank" \
		eval '[[ $(grep -c "^\[0\] chatter rank 0 line" "$d/f.console") == 8000 &&
		        $(grep -c "chatter rank" "$d/f.console") == 48000 &&
		        $(grep -c "^\[5\] chatter rank 5 line 7999\$" "$d/f.console") == 1 ]]' ||
		grep -c chatter "$d/f.console" | diag -
	check "... the session leaves no rank, gdb or crdbg-server on any node" \
		eval 'wait_long eval "! rings_left && ! pgrep -x crdbg-server >/dev/null"' ||
		ps -eo pid,args | grep -E 'prog_ring|crdbg|gdb' | diag -
}
console_script() {
	printf '%s\n' 'break ring_step' continue continue continue \
		'echo === stacks before' 'stacks -l' 'echo === end' \
		'echo === stdin before' '[0] print (long)lseek(0, 0, 1)' 'echo === end' \
		checkpoint continue restart \
		'echo === stacks after' 'stacks -l' 'echo === end' \
		'echo === stdin after' '[0] print (long)lseek(0, 0, 1)' 'echo === end' \
		'input hello' 'delete 1' continue quit
}
lseek_of() { # WHEN: rank 0's lseek(0, 0, SEEK_CUR) before or after
	awk -v w="=== stdin $1" '$0 == w { on = 1; next } /^=== end/ { on = 0 } on' "$d/f.console" |
		sed -n 's/^\[0\]: .* = \(-\{0,1\}[0-9][0-9]*\)$/\1/p' | head -n 1
}
stacks_of() { # WHEN: the console's stacks before or after
	awk -v w="=== stacks $1" '$0 == w { on = 1; next } /^=== end/ { on = 0 } on' "$d/f.console" |
		grep -E '^ *\[[0-9]'	# the tree, without the prompt or srun's words
}

# step_d: node2 killed once its parts froze their ranks: every part called
# off, the ranks on node0 and node1 thawed; they then find the ring
# broken. Last: the cluster has lost a node.
step_d() {
	local jobs_before parts_before node2 snap
	# --no-kill: Slurm does not end the job when it finds node2 down
	# (SlurmdTimeout): whether the ranks on node0 and node1 run on is the
	# job's affair, and this one runs on until it meets the lost node. A
	# rank whose peer vanished learns it after RING_TIMEOUT.
	RING_SRUN=--no-kill ring_start d RING_TIMEOUT=20
	wait_long ring_at_wait d
	jobs_before=$(ls "$S/.jobs" 2>/dev/null | sort)
	parts_before=$(ls "$S" 2>/dev/null | sort)
	node2=$(cat "$CRDBG_CLUSTER_DIR/run/node2.pid")
	t0=$(date +%s)
	timeout 900 "$crdbg" checkpoint --job "slurm:$(ring_jobid d)" --store "$S" \
		--backend "$backend" --timeout 120 -v >"$d/d.handle" 2>"$d/d.ckpt.err" &
	coord=$!
	wait_long node2_frozen && kill -KILL "$node2"
	sec "node2 killed in the cut"
	check "a node killed mid-checkpoint: the coordinator ends, one line naming node2 and its silence" coord_ok ||
		diag "$d/d.ckpt.err"
	sec "coordinator ended"
	check "... no manifest and no part left in the store (crdbg list shows none)" \
		nothing_kept "$jobs_before" "$parts_before" ||
		{ diag "$d/d.list"; ls -a "$S" "$S/.jobs" | sed 's/^/# /'; }
	snap_if_slow 120 survivors &
	snap=$!
	check "... the ranks on node0 and node1 run on (thawed) and end when they meet the lost node" \
		survivors_ok || diag "$d/d.0.out" "$d/d.0.err" "$d/d.srun"
	kill "$snap" 2>/dev/null
	check "... nothing hangs: the job's srun ends, no part or criu is left" \
		eval 'wait_long gone "$srun_pid" && ! pgrep -x criu >/dev/null &&
		      ! pgrep -f "crdbg-part checkpoint " >/dev/null' || diag "$d/d.srun"
	sec "node loss"
}
# With -v a part logs every thread it froze: node2's tree is in the cut.
node2_frozen() { grep -q '^\[node2\] crdbg: checkpoint pid' "$d/d.ckpt.err"; }
coord_ok() {
	wait_long gone "$coord"
	wait "$coord"
	# node2's parts fell silent: taken as lost long before Slurm notices (SlurmdTimeout)
	[[ $? != 0 && ! -s $d/d.handle ]] &&
		tail -n 1 "$d/d.ckpt.err" | grep -q "^crdbg: .*node2 .*no word from it for 20 s"
}
nothing_kept() { # JOBS PARTS: the store as before
	[[ $(ls "$S/.jobs" 2>/dev/null | sort) == "$1" && $(ls "$S" 2>/dev/null | sort) == "$2" ]] &&
		"$crdbg" list --store "$S" >"$d/d.list" 2>&1 && ! grep -q INVALID "$d/d.list"
}
survivors_ok() { # thawed: once their go file is there, they run into the lost ring
	# (a reset from node2's kernel, or 20 s without a message)
	touch "$d/d.go"
	wait_long eval 'has_line "$d/d.0.err" "^ring broken: rank 0 " &&
		has_line "$d/d.1.err" "^ring broken: rank 1 " &&
		has_line "$d/d.3.err" "^ring broken: rank 3 " &&
		has_line "$d/d.4.err" "^ring broken: rank 4 "' &&
		wait_long eval '! rings_left'
}

# step_m: Open MPI's mpirun inside salloc, as a user runs it: mpirun on
# this login node starts its orteds on node0-2 with srun, each orted two
# ranks (tests/crs/prog_mpi: an MPI_Allreduce every iteration, held at
# iteration 4 until a go file exists). checkpoint LAUNCHER_PID --kill
# takes the Slurm job, as --job slurm:ID would: four parts, a daemon's
# tree on each node and the launcher's here, its srun recorded as its
# agent; restart JOB in a new allocation restores every part, and the
# launcher ends the job as an uninterrupted run does. step_h: the same
# with MPICH's mpiexec.hydra, its hydra_pmi_proxys started by srun.
ompi_env=(env OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_vader_single_copy_mechanism=none
	OMPI_MCA_btl_tcp_if_include=10.20.0.0/24 OMPI_MCA_oob_tcp_if_include=10.20.0.0/24
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun)
# The nodes share one kernel, so UCX takes them for one machine, and its
# shared-memory transports cannot reach across their PID namespaces: TCP
# between every two ranks. mpiexec.hydra's proxies reach it at 10.20.0.1.
mpich_env=(env UCX_TLS=self,tcp UCX_NET_DEVICES=eth0 mpiexec.hydra -bootstrap slurm
	-localhost 10.20.0.1)
mpi_sorted() { grep '^rank ' "$1" | sort; }
mpi_at_wait() { [[ $(grep -c '^rank [0-5] iter 4 ' "$d/$1.out" 2>/dev/null) == 6 ]]; }
mpi_start() { # NAME [WAIT]: salloc's pid in $salloc_pid; $launch and $mpi: the job
	# in a session of its own, as from a login shell (this script entered
	# the login node's PID namespace from outside: session 0)
	setsid salloc -N3 -n6 -J "mpi-$1" --quiet "${launch[@]}" "$mpi" 8 100 \
		${2:+4 $d/$1.go} >>"$d/$1.out" 2>"$d/$1.err" </dev/null &
	salloc_pid=$!
}
# launcher_step KEY NAME DAEMON: the checkpoint of a launcher's job and its restart
launcher_step() {
	local k=$1 name=$2 daemon=$3 jobid handle rc snap
	t0=$(date +%s)
	mpi_start "${k}plain"
	wait "$salloc_pid"
	check "$name in salloc: six ranks over node0-2 run to their end" \
		eval '[[ $(grep -c "^rank [0-5] done total " "$d/${k}plain.out") == 6 ]]' ||
		diag "$d/${k}plain.out" "$d/${k}plain.err"
	sec "$name: uninterrupted run"
	mpi_start "$k" wait
	wait_long mpi_at_wait "$k"
	jobid=$(squeue -h -n "mpi-$k" -o %i | head -n 1)
	cp "$d/$k.out" "$d/$k.at"
	snap_if_slow 300 "$k-ckpt" &
	snap=$!
	# named by the launcher's pid: the whole job is taken, as --job slurm:ID
	timeout 600 "$crdbg" checkpoint "$(pgrep -n -x "$name")" --kill --store "$S" \
		--backend "$backend" -v \
		>"$d/$k.handle" 2>"$d/$k.ckpt.err"
	rc=$?
	kill "$snap" 2>/dev/null
	handle=$(cat "$d/$k.handle")
	((rc == 0)) || touch "$d/$k.go"	# the job went on: let it end
	wait_long eval '! kill -0 "$salloc_pid" 2>/dev/null'
	check "$name in salloc: checkpoint PID --kill: the Slurm job's: one part on each node ($daemon's) and $name's, its srun as agent" \
		eval '[[ $rc == 0 && -n $handle && $(grep -c "Slurm job $jobid: the whole job" "$d/$k.ckpt.err") == 1 && $(grep -c "^part " "$(manifest "$handle")") == 4 ]] &&
			grep -q "^agents 3 [0-9]" "$(manifest "$handle")" && ! pgrep -f "^$mpi " >/dev/null' ||
		diag "$d/$k.ckpt.err" "$(manifest "$handle")"
	sec "$name: checkpoint"
	cp "$d/$k.at" "$d/$k.out"
	touch "$d/$k.go"
	snap_if_slow 300 "$k-restart" &
	snap=$!
	timeout 900 setsid salloc -N3 -n6 -J "mpi-$k-restart" --quiet "$crdbg" restart "$handle" \
		--store "$S" --backend "$backend" --timeout 600 -v \
		>>"$d/$k.out" 2>"$d/$k.rst.err" </dev/null
	rc=$?
	kill "$snap" 2>/dev/null
	check "$name in salloc: restart JOB in a new allocation: every rank ends as the uninterrupted run, $name with 0" \
		eval '[[ $rc == 0 && "$(mpi_sorted "$d/$k.out")" == "$(mpi_sorted "$d/${k}plain.out")" ]]' ||
		diag "$d/$k.rst.err" "$d/$k.out"
	# the agent stayed stopped at the release and was ended, not killed
	check "$name in salloc: ... its srun never ran again and ended with the daemons' code" \
		eval '! grep -q "agent .*never stopped\|: killed$" "$d/$k.rst.err"' ||
		diag "$d/$k.rst.err"
	check "$name in salloc: nothing of the job is left after its end" \
		eval '! pgrep -f "^$mpi " >/dev/null && ! pgrep -x "$daemon" >/dev/null && ! pgrep -x "$name" >/dev/null'
	sec "$name: restart"
}
step_m() {
	launch=("${ompi_env[@]}") mpi=$build/tests/crs/prog_mpi
	launcher_step m mpirun orted
}
step_h() {
	launch=("${mpich_env[@]}") mpi=$build/tests/crs/prog_mpi_mpich
	if [[ ! -x $mpi ]] || ! command -v mpiexec.hydra >/dev/null; then
		for i in 1 2 3 4 5; do skip "MPICH's mpiexec.hydra in salloc" "no MPICH here (make deps)"; done
		return
	fi
	launcher_step h mpiexec.hydra hydra_pmi_proxy
}

# step_p: srun --mpi=pmix direct launch of prog_mpi: every rank is a PMIx
# client of its step's slurmstepd, which no checkpoint takes. --job
# slurm:ID is refused before anything is frozen, in one line that names
# the connection and says how to run the job; nothing is kept and the
# job runs to its end.
step_p() {
	local jobid jobs_before parts_before rc
	t0=$(date +%s)
	jobs_before=$(ls "$S/.jobs" 2>/dev/null | sort)
	parts_before=$(ls "$S" 2>/dev/null | sort)
	setsid salloc -N3 -n6 -J mpi-p --quiet env OMPI_MCA_btl=self,vader,tcp \
		OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl_tcp_if_include=10.20.0.0/24 \
		srun --mpi=pmix "$build/tests/crs/prog_mpi" 8 100 4 "$d/p.go" \
		>"$d/p.out" 2>"$d/p.err" </dev/null &
	salloc_pid=$!
	wait_long mpi_at_wait p
	jobid=$(squeue -h -n mpi-p -o %i | head -n 1)
	timeout 600 "$crdbg" checkpoint --job "slurm:$jobid" --kill --store "$S" \
		--backend "$backend" >"$d/p.handle" 2>"$d/p.ckpt.err"
	rc=$?
	check "srun --mpi=pmix: --job slurm:ID refused in one line naming a rank's link to its slurmstepd and how to run the job" \
		eval '[[ $rc != 0 && ! -s $d/p.handle ]] &&
			tail -n 1 "$d/p.ckpt.err" | grep -q "^crdbg: .*is connected to its tree.s parent, pid [0-9]* (slurmstepd).*nothing was frozen.*mpirun or mpiexec.hydra inside salloc"' ||
		diag "$d/p.ckpt.err"
	check "srun --mpi=pmix: ... nothing kept in the store" nothing_kept "$jobs_before" "$parts_before" ||
		{ diag "$d/d.list"; ls -a "$S" "$S/.jobs" | sed 's/^/# /'; }
	touch "$d/p.go"
	wait_long eval '! kill -0 "$salloc_pid" 2>/dev/null'
	check "srun --mpi=pmix: ... and every rank runs on to its end" \
		eval '[[ $(grep -c "^rank [0-5] done total " "$d/p.out") == 6 ]]' || diag "$d/p.out" "$d/p.err"
	sec "srun --mpi=pmix: refusal"
}

# step_l: Debian's LAMMPS (its melt example, made small), six ranks under
# mpirun inside salloc, two on each node, rank 0 writing its log to the
# cluster directory: checkpointed by mpirun's pid mid-run (once the log has
# its second thermo line) with --kill, then restarted $LAMMPS_RESTARTS
# times from that one checkpoint, each in a new allocation: every
# restart's log holds exactly the thermo lines of an uninterrupted run
# (each restart puts the log back as it was at the checkpoint).
lmp=/usr/bin/lmp
# A thermo line: the step, then numbers only (step 0's temperature is a bare 3).
thermo() { grep -E '^ *[0-9]+( +-?[0-9][0-9.eE+-]*)+ *$' "$1" 2>/dev/null; }
lammps_start() { # NAME: salloc's pid in $salloc_pid, the log $d/NAME.lammps
	(cd "$d" && exec timeout 900 setsid salloc -N3 -n6 -J "lmp-$1" --quiet "${ompi_env[@]}" "$lmp" \
		-in "$top/tests/debug/in.melt" -var s 4 -var n 200 -log "$d/$1.lammps" -screen none \
		>"$d/$1.out" 2>"$d/$1.err" </dev/null) &
	salloc_pid=$!
}
step_l() {
	local handle rc snap i same=0 restarts=${LAMMPS_RESTARTS:-3}
	t0=$(date +%s)
	if [[ ! -x $lmp ]]; then
		for i in 1 2 3 4; do skip "LAMMPS in salloc" "no $lmp (Debian's lammps package)"; done
		return
	fi
	lammps_start lplain
	wait "$salloc_pid"
	thermo "$d/lplain.lammps" >"$d/lplain.thermo"
	check "LAMMPS in salloc: six ranks over node0-2 print the thermo lines of steps 0 to 200" \
		eval '[[ $(wc -l <"$d/lplain.thermo") == 11 ]]' || diag "$d/lplain.lammps" "$d/lplain.err"
	sec "LAMMPS: uninterrupted run"
	lammps_start l
	wait_long eval '(($(thermo "$d/l.lammps" | wc -l) >= 2))'
	snap_if_slow 300 lammps-ckpt &
	snap=$!
	timeout 600 "$crdbg" checkpoint "$(pgrep -n -x mpirun)" --kill --store "$S" \
		--backend "$backend" >"$d/l.handle" 2>"$d/l.ckpt.err"
	rc=$?
	kill "$snap" 2>/dev/null
	handle=$(cat "$d/l.handle")
	wait_long eval '! kill -0 "$salloc_pid" 2>/dev/null'
	# cut mid-run: the log it left has some of the thermo lines, not all
	check "LAMMPS in salloc: checkpoint MPIRUN_PID --kill mid-run: the whole job, an orted's part on each node and mpirun's" \
		eval '[[ $rc == 0 && -n $handle && $(grep -c "^part " "$(manifest "$handle")") == 4 ]] &&
			(($(thermo "$d/l.lammps" | wc -l) < 11)) && ! pgrep -x lmp >/dev/null' ||
		diag "$d/l.ckpt.err" "$d/l.err"
	sec "LAMMPS: checkpoint"
	for ((i = 1; i <= restarts; i++)); do
		timeout 900 setsid salloc -N3 -n6 -J "lmp-restart-$i" --quiet "$crdbg" restart \
			"$handle" --store "$S" --backend "$backend" --timeout 600 \
			>"$d/l.rst$i.out" 2>"$d/l.rst$i.err" </dev/null
		rc=$?
		thermo "$d/l.lammps" >"$d/l.thermo$i"
		if ((rc == 0)) && cmp -s "$d/lplain.thermo" "$d/l.thermo$i"; then
			same=$((same + 1))
		else
			diag "$d/l.rst$i.err"
			diff "$d/lplain.thermo" "$d/l.thermo$i" | diag /dev/stdin
		fi
		sec "LAMMPS: restart $i"
	done
	check "LAMMPS in salloc: $restarts restarts from the one checkpoint, each log's thermo lines the uninterrupted run's" \
		eval '((same == restarts))'
	check "LAMMPS in salloc: nothing of the job is left after its ends" \
		eval '! pgrep -x lmp >/dev/null && ! pgrep -x orted >/dev/null && ! pgrep -x mpirun >/dev/null'
}

t0=$(date +%s)
# The uninterrupted run: what every restart must print.
touch "$d/plain.go"
ring_start plain
wait_long gone "$srun_pid"
plain_ok() {
	local r
	for r in $ranks; do
		has_line "$d/plain.$r.out" "^ring rank $r of 6 on node$((r % 3))\$" &&
			has_line "$d/plain.$r.out" "^done rank $r " || return 1
	done
}
check "the ring of 6 ranks runs across node0-2 (rank r on node r%3) to its end" plain_ok ||
	diag "$d/plain.srun" "$d/plain.0.out" "$d/plain.0.err"
sec "uninterrupted run"
# By hand, some steps alone: JOBCLUSTER_STEPS="f" (e, b and c need a).
for step in $steps; do
	"step_$step"
done
exit $((failed != 0))
