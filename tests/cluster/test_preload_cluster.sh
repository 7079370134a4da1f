#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbg debug --preload LIB puts LIB into the ranks only, never into
# their launcher, on the namespaced Slurm cluster (scripts/cluster --kind
# ns, two nodes): Documentation/console.md, "Launchers and --preload".
#
#   salloc -N2 crdbg debug --preload LIB -- mpirun prog   mpirun inside an
#       allocation starts its orted on the nodes with srun: the ranks have
#       LIB, mpirun and the orteds neither have it nor LD_PRELOAD
#   crdbg debug --preload LIB -- srun -N2 prog            the same for srun
#   crdbg debug --mpi-hold --preload libcrdbg-mpi -- mpiexec.hydra -n 4 prog
#       (MPICH, on the login node): the ranks have it, held by it in
#       MPI_Init; mpiexec.hydra and its proxies have neither
#   a launch that fails says what crdbg changed about it
#
# Runs on the host (make check-host) and in the guest (group cluster).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
prog=$build/tests/cluster/prog_mpi_preload
lib=$build/usr/libcrdbg.so
mpich=$build/tests/cluster/prog_mpi_preload_mpich
work=$(mktemp -d /tmp/test_preload_cluster.XXXXXX)
chmod 755 "$work"
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
plan=11
limit=${CRDBG_PRELOAD_LIMIT:-600}	# seconds for one session (TCG guest: minutes)
backend=preload
. "$top/tests/guest/tap.sh"

echo "TAP version 13"
echo "1..$plan"

if ! command -v slurmctld >/dev/null || ! command -v mpirun >/dev/null || [[ ! -x $prog ]]; then
	for i in $(seq $plan); do skip "--preload on a cluster" "needs slurm-wlm, Open MPI and $prog (make deps; make)"; done
	exit 0
fi

# On the cluster's login node; every file lands in $work.
cat >"$work/scenarios.sh" <<'EOF'
set -u
w=$1 crdbg=$2 prog=$3 lib=$4 limit=$5 mpich=$6
export OMPI_MCA_btl_tcp_if_include=10.20.0.0/24 OMPI_MCA_oob_tcp_if_include=10.20.0.0/24
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PRELOAD_CHECK=${lib##*/}
cd "$w"
cp "$prog" "$w/prog"
ex=(-ex "timeout $((limit - 60))" -ex continue)
until_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.2; done
}
ranks_up() { [ "$(grep -c 'rank [0-9]* lib=' "$w/$1.out")" = "$2" ]; }
# launcher NAME COMM: COMM's maps and environment, for each such process
# of ours (its executable is the system's, its command line names prog).
launcher() {
	local p
	for p in $(pgrep -x "$2"); do
		grep -q "$w/prog" "/proc/$p/cmdline" 2>/dev/null || continue
		echo "$2 $p lib=$(grep -q "$PRELOAD_CHECK" "/proc/$p/maps" && echo yes || echo no)" \
			"env=$(tr '\0' '\n' <"/proc/$p/environ" | grep -q '^LD_PRELOAD=' && echo yes || echo no)"
	done >>"$w/$1.launcher"
}
# session NAME CMD...: run a debug session of four ranks whose launcher
# is looked at once every rank reported.
session() {
	local name=$1 pid
	shift
	rm -f "$w/go"
	PRELOAD_GO=$w/go timeout "$limit" "$@" </dev/null >"$w/$name.out" 2>&1 &
	pid=$!
	until_for "$limit" ranks_up "$name" 4
	launcher "$name" mpirun
	launcher "$name" orterun
	launcher "$name" srun
	launcher "$name" mpiexec.hydra
	touch "$w/go"
	wait $pid
	echo "rc=$?" >"$w/$name.rc"
}
session mpirun salloc -N2 -n4 "$crdbg" debug --preload "$lib" "${ex[@]}" -- \
	mpirun "$w/prog"
session srun "$crdbg" debug --preload "$lib" "${ex[@]}" -- srun -N2 -n4 "$w/prog"
if [ -x "$mpich" ] && command -v mpiexec.hydra >/dev/null; then
	cp "$mpich" "$w/prog_mpich"
	PRELOAD_CHECK=libcrdbg-mpi-mpich.so session hydra "$crdbg" debug --mpi-hold \
		--preload "${lib%/*}/libcrdbg-mpi-mpich.so" "${ex[@]}" -- \
		mpiexec.hydra -n 4 "$w/prog_mpich"
fi
# A launch that fails: an MPI program that does not exist. Outside an
# allocation, as root: a network namespace of its own.
timeout "$limit" "$crdbg" debug --preload "$lib" -ex quit -- mpirun -np 1 "$w/none" \
	</dev/null >"$w/fail.out" 2>&1
echo "rc=$?" >"$w/fail.rc"
EOF

start=$(date +%s)
"$top/scripts/cluster" --nodes 2 --timeout $((3 * limit)) --dir "$work/c" -- \
	bash "$work/scenarios.sh" "$work" "$crdbg" "$prog" "$lib" $limit "$mpich" \
	>"$work/cluster.out" 2>&1
rc=$?
echo "# cluster and sessions: $(($(date +%s) - start)) s, exit $rc"
[[ $rc == 0 ]] || diag "$work/cluster.out"
if [[ -n ${CRDBG_RESULTS:-} ]]; then
	mkdir -p "$CRDBG_RESULTS/preload-cluster.files"
	cp "$work"/*.out "$work"/*.rc "$work"/*.launcher "$CRDBG_RESULTS/preload-cluster.files/" 2>/dev/null
fi

# ranks NAME: the four ranks' reports, labels and \r gone.
ranks() { tr -d '\r' <"$work/$1.out" | grep -o 'rank [0-9]* lib=.*' | sort; }
for l in mpirun srun; do
	check "$l: the session starts and ends well, four ranks reporting" \
		eval "grep -qx rc=0 $work/$l.rc && [[ \$(ranks $l | wc -l) == 4 ]]" ||
		diag "$work/$l.rc" "$work/$l.out"
	check "$l: every rank has the library" \
		eval "[[ \$(ranks $l | grep -c ' lib=yes ') == 4 ]]" || diag "$work/$l.out"
done
check "mpirun: no orted (the ranks' parent on each node) has it, in its maps or environment" \
	eval "[[ \$(ranks mpirun | grep -c ' parent=orted parent_lib=no parent_env=no\$') == 4 ]]" ||
	diag "$work/mpirun.out"
check "mpirun: mpirun itself has neither" \
	eval "grep -qE '^(mpirun|orterun) .* lib=no env=no\$' $work/mpirun.launcher && ! grep -q 'yes' $work/mpirun.launcher" ||
	diag "$work/mpirun.launcher"
check "srun: srun and slurmstepd (the ranks' parent) have neither" \
	eval "grep -q '^srun .* lib=no env=no\$' $work/srun.launcher && ! grep -q yes $work/srun.launcher &&
	      [[ \$(ranks srun | grep -c ' parent_lib=no parent_env=no\$') == 4 ]]" ||
	diag "$work/srun.launcher" "$work/srun.out"
if [[ -x $mpich ]] && command -v mpiexec.hydra >/dev/null; then
	check "hydra: --mpi-hold --preload libcrdbg-mpi: the session starts and ends well, four ranks held" \
		eval "grep -qx rc=0 $work/hydra.rc && [[ \$(ranks hydra | wc -l) == 4 ]]" ||
		diag "$work/hydra.rc" "$work/hydra.out"
	check "hydra: every rank has the library, no hydra_pmi_proxy has it or LD_PRELOAD" \
		eval "[[ \$(ranks hydra | grep -c ' lib=yes parent=hydra_pmi_proxy parent_lib=no parent_env=no\$') == 4 ]]" ||
		diag "$work/hydra.out"
	check "hydra: mpiexec.hydra itself has neither" \
		eval "grep -q '^mpiexec.hydra .* lib=no env=no\$' $work/hydra.launcher && ! grep -q yes $work/hydra.launcher" ||
		diag "$work/hydra.launcher"
else
	for i in 1 2 3; do skip "hydra: --mpi-hold --preload" "needs MPICH (mpiexec.hydra, mpicc.mpich)"; done
fi
check "a failed launch says what crdbg changed about it, in one line" \
	eval "! grep -qx rc=0 $work/fail.rc &&
	      grep -q 'MPIR process acquisition failed: .*(crdbg changed the launch: added --tag-output -x LD_PRELOAD=$lib; its stdio on FIFOs; ran it in a network namespace of its own' $work/fail.out" ||
	diag "$work/fail.out"
echo "# $(grep 'acquisition failed' "$work/fail.out")"

[[ $n == "$plan" ]] || echo "# planned $plan tests, ran $n"
exit $((failed ? 1 : 0))
