#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: a debug session of six ranks over three namespaced Slurm
# nodes (scripts/cluster). Time from `crdbg debug -- srun -N3 -n6` to every
# rank stopped at a breakpoint, next to the same job under srun alone (to
# its end), in rounds that alternate the two in one cluster; `crdbg
# attach` to such a job running past MPI_Init, to every rank stopped
# (each gdb reads the symbols of the libraries MPI_Init loaded); and the
# messages that reach the front end for one aggregated reply (the SDM
# tree merges identical replies: it must stay 1 whatever the ranks).
# Prints a Markdown section.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
rounds=${ROUNDS:-3}
work=$(mktemp -d /tmp/bench_debug_cluster.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

cat >"$work/rounds.sh" <<'EOF'
set -u
w=$1 crdbg=$2 prog=$3 rounds=$4
export OMPI_MCA_btl_tcp_if_include=10.20.0.0/24 OMPI_MCA_oob_tcp_if_include=10.20.0.0/24
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }'; }
for r in $(seq "$rounds"); do
	t0=$(now)
	srun -N3 -n6 "$prog" >/dev/null 2>&1
	echo "srun $(since "$t0")" >>"$w/times"
	t0=$(now)
	"$crdbg" debug -ex "break compute" -ex continue -ex "print value" -ex sdm \
		-ex "print rank" -ex sdm -ex quit -- srun -N3 -n6 "$prog" 2>&1 |
	while IFS= read -r line; do
		case $line in
		*"stopped: breakpoint"*) echo "crdbg $(since "$t0")" >>"$w/times" ;;
		"sdm: "*) echo "$line" >>"$w/sdm" ;;
		esac
	done
	srun -N3 -n6 "$prog" spin >"$w/spin.out" 2>&1 &
	job=$!
	# A job that did not come up (seen once, an Open MPI start-up
	# failure) gives this round no attach time.
	for i in $(seq 600); do
		[ "$(grep -c '^mpi rank' "$w/spin.out")" = 6 ] && break
		kill -0 $job 2>/dev/null || break
		sleep 0.1
	done
	if [ "$(grep -c '^mpi rank' "$w/spin.out")" != 6 ]; then
		cat "$w/spin.out" >>"$w/spin.failed"
		kill $job 2>/dev/null
		wait $job
		continue
	fi
	t0=$(now)
	# Released to end by itself: a job killed leaves Open MPI's shared
	# memory segments behind, which the next one on the nodes trips on.
	"$crdbg" attach -ex "set var spinning = 0" -ex continue $job </dev/null 2>&1 |
	while IFS= read -r line; do
		case $line in
		*"stopped: attached"*) echo "attach $(since "$t0")" >>"$w/times" ;;
		esac
	done
	wait $job
done
EOF

"$top/scripts/cluster" --nodes 3 --timeout 1200 -- \
	bash "$work/rounds.sh" "$work" "$build/crdbg" "$build/tests/debug/mpi_debug" "$rounds" \
	>"$work/out" 2>&1
median() { sort -n | awk '{v[NR]=$1} END {print NR ? v[int((NR+1)/2)] : "n/a"}'; }
srun_s=$(awk '$1=="srun"{print $2}' "$work/times" | median)
crdbg_s=$(awk '$1=="crdbg"{print $2}' "$work/times" | median)
attach_s=$(awk '$1=="attach"{print $2}' "$work/times" | median)
same=$(awk 'NR%2==1' "$work/sdm" | sed -n 's/.*: \([0-9]*\) messages.*/\1/p' | sort -u | tr '\n' ' ')
diff=$(awk 'NR%2==0' "$work/sdm" | sed -n 's/.*: \([0-9]*\) messages.*/\1/p' | sort -u | tr '\n' ' ')
same=${same% } diff=${diff% }

echo "## A debug session over three nodes"
echo
echo "Six ranks of \`mpi_debug\` over three namespaced Slurm nodes, one"
echo "crdbg-server per node, $rounds rounds alternating the two in one cluster;"
echo "medians. The attach is to a job past MPI_Init, so each gdb reads the"
echo "symbols of the libraries MPI_Init loaded."
echo
echo "| what | median |"
echo "|---|---|"
echo "| \`srun -N3 -n6 mpi_debug\` alone, start to end | ${srun_s} s |"
echo "| \`crdbg debug -- srun -N3 -n6 mpi_debug\`, start to every rank stopped at \`break compute\` | ${crdbg_s} s |"
if [[ $srun_s != n/a && $crdbg_s != n/a ]]; then
	echo "| ratio (debug session to stop / job alone) | $(awk -v a="$crdbg_s" -v b="$srun_s" 'BEGIN { printf "%.1f", a / b }')x |"
fi
echo "| \`crdbg attach\` to a running \`srun -N3 -n6 mpi_debug spin\` (past MPI_Init), start to every rank stopped | ${attach_s} s ($(grep -c '^attach' "$work/times") rounds) |"
echo
echo "Front-end messages for one command (console command \`sdm\`): \`print value\`"
echo "at the breakpoint, the same value on all six ranks: ${same:-n/a}; \`print rank\`, six"
echo "distinct values: ${diff:-n/a} (one per distinct reply). The six gdbs and the job"
echo "share the host's two cores, so the times move with the host's load."
echo
echo "Goal: one front-end message for an aggregated reply of identical values:"
echo "$([[ $same == 1 ]] && echo "**met**" || echo "**not met**") (${same:-n/a})."
echo
echo "Measured in three namespaced nodes on the host (scripts/cluster)."
