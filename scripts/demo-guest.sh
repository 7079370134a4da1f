#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of `make demo`, run inside the guest by scripts/demo.sh.
set -euo pipefail
export PATH=$CRDBG_BUILD:$PATH

bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
step() {
	printf '$ %s\n' "$*"
	"$@"
}

bold "3. crdbg.ko"
step insmod "$CRDBG_BUILD/kmod/crdbg.ko"
step crdbg kmod status

bold "4. an exact freeze: a spinning program stops at one PC and stays there"
sh -c 'while :; do :; done' &
spin=$!
sleep 0.5
step crdbg freeze "$spin"
step crdbg threads "$spin"
sleep 1
step crdbg threads "$spin"
step crdbg thaw "$spin"
kill "$spin"

bold "5. checkpoint, kill, restart without and with the debugger"
bash "$CRDBG_TOP/tests/crs/demo.sh"

bold "6. checkpoint and restart inside a debug session (2 ranks, 4 worker threads each)"
cat >/tmp/demo-session <<'EOS'
break compute
continue
stacks
thread apply 3 p $xmm0.v2_double[0]
checkpoint
restart
stacks
thread apply 3 p $xmm0.v2_double[0]
continue
EOS
cat /tmp/demo-session
export CRDBG_STORE=/tmp/demo-store
step crdbg debug -n 2 --preload "$CRDBG_BUILD/usr/libcrdbg.so" --batch /tmp/demo-session \
	"$CRDBG_BUILD/tests/debug/prog_ckpt"
step crdbg list

bold "7. a whole Open MPI job (mpirun and 2 ranks) checkpointed, killed and restarted"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MPIR_DO_NOT_WARN=1
rm -f /tmp/demo-go
: >/tmp/demo-mpi.out
# Its own session and network namespace (so the restored mpirun can bind
# its port again); libcrdbg in the ranks only. The ranks wait after
# iteration 3 until /tmp/demo-go exists.
setsid unshare -n sh -c 'ip link set lo up; exec "$@"' sh \
	mpirun -n 2 --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
	-x LD_PRELOAD="$CRDBG_BUILD/usr/libcrdbg.so" "$CRDBG_BUILD/tests/crs/prog_mpi" 8 100 3 /tmp/demo-go \
	>>/tmp/demo-mpi.out 2>/dev/null </dev/null &
mpirun_pid=$!
for _ in $(seq 600); do [ "$(grep -c 'iter 3 ' /tmp/demo-mpi.out)" = 2 ] && break; sleep 0.1; done
cat /tmp/demo-mpi.out
printf '$ crdbg checkpoint %s --kill\n' "$mpirun_pid"
h=$(crdbg checkpoint "$mpirun_pid" --kill)
wait "$mpirun_pid" 2>/dev/null || true
touch /tmp/demo-go
step crdbg restart "$h"
tail -4 /tmp/demo-mpi.out

bold "8. a debug session of an MPI program (mpirun -n 2, MPIR) with a checkpoint and a restart"
cat >/tmp/demo-mpi-session <<'EOS'
break compute
continue
stacks
print rank
checkpoint
restart
stacks
print rank
continue
EOS
cat /tmp/demo-mpi-session
step crdbg debug --preload "$CRDBG_BUILD/usr/libcrdbg.so" --batch /tmp/demo-mpi-session \
	-- mpirun -n 2 --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
	"$CRDBG_BUILD/tests/debug/mpi_debug"
step crdbg list

bold "9. the checkpoint timeline: auto-checkpoint at every stop, then restart 2 and back (2 ranks)"
cat >/tmp/demo-timeline <<'EOS'
set auto-checkpoint on
set checkpoint-keep 4
break tl_step
continue
print i
continue
print i
continue
print i
checkpoints
restart 2
print i
back
print i
set auto-checkpoint off
delete
continue
EOS
cat /tmp/demo-timeline
export CRDBG_STORE=/tmp/demo-timeline-store
step crdbg debug -n 2 --preload "$CRDBG_BUILD/usr/libcrdbg.so" --batch /tmp/demo-timeline \
	"$CRDBG_BUILD/tests/debug/prog_timeline"
step crdbg list

bold "10. a job over 3 nodes (6 ranks under srun in a TCP ring) checkpointed, killed and restarted inside a debug session"
cat >/tmp/demo-ring-session <<'EOS'
break ring_step
continue
continue
stacks
print iter
checkpoint
kill
restart
stacks
print iter
delete
continue
EOS
cat /tmp/demo-ring-session
# Run on the login node of a throwaway cluster of three namespaced nodes
# (scripts/cluster): each rank writes its stdout to a file of its own
# (RING_OUT), since a restarted rank no longer has srun's pipes; the
# store is in the cluster's directory, which every node sees.
cat >/tmp/demo-ring.sh <<'EOS'
set -eu
d=$CRDBG_CLUSTER_DIR
nodes="10.20.0.10 10.20.0.11 10.20.0.12"
printf '$ salloc -N3 -n6 crdbg debug --preload libcrdbg.so --batch /tmp/demo-ring-session -- srun --mpi=none -N3 -n6 -m cyclic prog_ring 8 4 ADDR0 ... ADDR5\n'
CRDBG_STORE=$d/store RING_OUT=$d/ring salloc -N3 -n6 --quiet \
	crdbg debug --preload "$CRDBG_BUILD/usr/libcrdbg.so" --batch /tmp/demo-ring-session \
	-- srun --mpi=none -N3 -n6 -m cyclic "$CRDBG_BUILD/tests/cluster/prog_ring" 8 4 \
	$nodes $nodes </dev/null
echo "(each rank's last line, from its own file)"
for r in 0 1 2 3 4 5; do tail -n 1 "$d/ring.$r.out"; done
EOS
ip link set lo up
step "$CRDBG_TOP/scripts/cluster" --kind ns --nodes 3 --timeout 900 -- bash /tmp/demo-ring.sh

step rmmod crdbg
echo
echo "demo: done"
