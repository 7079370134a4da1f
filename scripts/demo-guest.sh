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

step rmmod crdbg
echo
echo "demo: done"
