#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: crdbg at work. First a scripted parallel debug session of an
# Open MPI program on this machine, seed 002's program stepped to its
# end with the parallel step (colours on a terminal), and a job of six
# ranks spread over a three-node Slurm cluster of namespaced nodes; then, in a QEMU guest running Debian's
# 6.1 kernel (this host cannot load modules and CRIU 3.17 fails on its
# kernel), crdbg.ko freezing a process, checkpoint/restart round trips
# with and without the debugger, a console session that checkpoints and
# restarts its job, a whole Open MPI job checkpointed and restarted, and
# a debug session of an MPI program with a checkpoint and a restart,
# the console's checkpoint timeline (auto-checkpoint, restart N, back),
# and a debug session of a job over three namespaced nodes inside the
# guest that checkpoints, kills and restarts it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
crdbg=$build/crdbg

bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

bold "1. a parallel debug session: 3 MPI ranks acquired through mpirun's MPIR interface"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MPIR_DO_NOT_WARN=1
mpi_prog=$build/tests/debug/mpi_debug
set -x
"$crdbg" debug -ex 'break compute' -ex continue -ex finish -ex 'print value' \
	-ex '[0] print rank' -ex stacks -ex status -ex continue \
	-- mpirun --oversubscribe -n 3 "$mpi_prog"
set +x

bold "1b. the parallel step: seed 002's 16-line program on 4 ranks, Table 1 (libcrdbg-mpi preloaded)"
set -x
"$crdbg" debug -ex mpi -ex next -ex next -ex next -ex next -ex next -ex next \
	-ex next -ex next -ex mpi -ex continue \
	-- mpirun --oversubscribe -n 4 -x LD_PRELOAD="$build/usr/libcrdbg-mpi-ompi.so" \
	"$build/tests/debug/prog_pstep"
set +x

bold "1c. a job over 3 nodes: a throwaway Slurm cluster (scripts/cluster), 6 ranks under srun, one crdbg-server per rank on its node"
set -x
"$top/scripts/cluster" --nodes 3 --timeout 300 -- env \
	OMPI_MCA_btl_tcp_if_include=10.20.0.0/24 OMPI_MCA_oob_tcp_if_include=10.20.0.0/24 \
	"$crdbg" debug -ex 'break compute' -ex continue -ex finish -ex 'print value' \
	-ex stacks -ex status -ex continue \
	-- srun -N3 -n6 "$mpi_prog"
set +x

bold "2. booting a QEMU guest (Debian 6.1 kernel, TCG) for crdbg.ko and CRIU"
exec "$top/scripts/vm" --timeout 1800 -- env CRDBG_BUILD="$build" CRDBG_TOP="$top" \
	bash "$top/scripts/demo-guest.sh"
