#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's LAMMPS under the console (guest, root, crdbg.ko loaded): its
# log.lammps grows as it runs. One batch session stops at the thermo
# output of step 20, checkpoints, runs on to step 40 (the log grows past
# the checkpoint), restarts (the rank is ended only once the restart can
# happen), and runs to the end. The log then holds the thermo lines of an
# uninterrupted run, each once, and what the first run wrote after the
# checkpoint is kept beside it. TAP. About 3 min of TCG.
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
lmp=/usr/bin/lmp
work=$(mktemp -d /tmp/crdbg-lammps.XXXXXX)
export CRDBG_STORE=$work/store
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
trap 'rm -rf "$work"' EXIT
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi; }
echo "1..6"
if [ ! -x "$lmp" ]; then
	for i in 1 2 3 4 5 6; do echo "ok $i # SKIP no $lmp (Debian's lammps package)"; done
	exit 0
fi

# LAMMPS's melt example made small (tests/debug/in.melt): 500 atoms, 100
# steps, thermo every 20, each thermo line written to the log at once.
cp "$top/tests/debug/in.melt" "$work/in.melt"
# A thermo line: the step, then numbers only (step 0's temperature is a bare 3).
thermo() { grep -E '^ *[0-9]+( +-?[0-9][0-9.eE+-]*)+ *$' "$1"; }

(cd "$work" && timeout 300 "$lmp" -in in.melt -log "$work/ref.lammps" >/dev/null 2>&1)
thermo "$work/ref.lammps" >"$work/ref.thermo"
[ "$(wc -l <"$work/ref.thermo")" = 6 ]
ok $? "an uninterrupted run prints the thermo lines of steps 0 to 100"
[ "$(wc -l <"$work/ref.thermo")" = 6 ] || sed 's/^/# /' "$work/ref.lammps" | tail -n 20

# Thermo::compute runs before each thermo line: stop 1 is step 0, the
# checkpoint at stop 2 (step 20: the log has step 0's line), stop 3 at
# step 40 (the log has grown by step 20's line).
cat >"$work/script" <<'EOS'
break LAMMPS_NS::Thermo::compute
timeout 0
continue
continue
checkpoint
continue
restart
delete
continue
quit
EOS
mkdir "$work/run"
(cd "$work/run" && timeout 900 "$build/crdbg" debug -n 1 --preload "$build/usr/libcrdbg.so" \
	--batch "$work/script" "$lmp" -in "$work/in.melt" -log "$work/run/log.lammps" \
	>"$work/out" 2>"$work/err")
rc=$?
sed 's/^/# /' "$work/out" "$work/err" | tail -n 40
ok "$rc" "the batch session (checkpoint, run on, restart, run to the end) exits 0"
# ("restart: [0] parked for their debuggers" is the restart's own news)
grep -q 'MPIR checkpoint handle) ' "$work/out" &&
	! grep -Eq '^(checkpoint|restart): .*(refused|cannot|could not|failed|error|lost)' "$work/out"
ok $? "the console checkpointed and restarted without an error"
thermo "$work/run/log.lammps" >"$work/run.thermo"
cmp -s "$work/ref.thermo" "$work/run.thermo"
ok $? "after the restart log.lammps has an uninterrupted run's thermo lines, each once"
diff "$work/ref.thermo" "$work/run.thermo" | sed 's/^/# /' | head
aside=$(ls "$work/run"/log.lammps.crdbg-after-* 2>/dev/null | head -n 1)
[ -n "$aside" ] && thermo "$aside" | grep -q .
ok $? "what the first run wrote after the checkpoint (a thermo line) is kept aside"
[ -n "$aside" ] && thermo "$aside" | sed 's/^/# kept aside: /'
! grep -q 'bad size' "$work/out" "$work/err"
ok $? "CRIU found no file of a bad size"
