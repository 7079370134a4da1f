#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The checkpoint benchmark (BENCH_CMDS): CRIU only works in the guest, so
# this boots one (scripts/vm) and runs bench-guest.sh there; prints its
# Markdown sections: crdbg vs raw CRIU, incremental checkpoints, lazy
# restart. Sizes: CKPT_BENCH_MB (MiB, default "64 1024"),
# CKPT_BENCH_INCR_MB (the incremental rows, default 1024), CKPT_BENCH_LAZY_MB
# (the lazy rows, default CKPT_BENCH_INCR_MB); CKPT_BENCH_SECTIONS (which
# sections, in order; default all);
# guest memory CKPT_BENCH_MEM (default 6144: a 1 GiB program, its images
# and a restored copy); CKPT_BENCH_ROUNDS (default 2); the XXH3-128 vs
# SHA-256 table at CKPT_BENCH_DIGEST_MB (default: CKPT_BENCH_MB).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$(mktemp -d /tmp/crdbg-ckpt-bench.XXXXXX)
trap 'rm -rf "$res"' EXIT
sections=${CKPT_BENCH_SECTIONS:-commands incr stop lazy digests}
mb=${CKPT_BENCH_MB:-64 1024}
incr_mb=${CKPT_BENCH_INCR_MB:-1024}
lazy_mb=${CKPT_BENCH_LAZY_MB:-$incr_mb}
digest_mb=${CKPT_BENCH_DIGEST_MB:-$mb}
rounds=${CKPT_BENCH_ROUNDS:-2}
mem=${CKPT_BENCH_MEM:-6144}

echo "## Checkpoint and restart against raw CRIU"
echo
echo "Boots one guest (CRIU runs only there) and runs tests/crs/bench-guest.sh in"
echo "it, which puts crdbg's checkpoint and restart beside raw \`criu dump\` and"
echo "\`criu restore\` of the same program, in the same rounds, one table a"
echo "subsection. Settings: \`CKPT_BENCH_SECTIONS='$sections'"
echo "CKPT_BENCH_MB='$mb' CKPT_BENCH_INCR_MB='$incr_mb' CKPT_BENCH_LAZY_MB='$lazy_mb'"
echo "CKPT_BENCH_DIGEST_MB='$digest_mb' CKPT_BENCH_ROUNDS=$rounds CKPT_BENCH_MEM=$mem\`."
if "$top/scripts/vm" --timeout 5400 --mem "$mem" --results "$res" -- /bin/sh -c \
	"CKPT_BENCH_SECTIONS='$sections' CKPT_BENCH_LAZY_MB='$lazy_mb' CKPT_BENCH_MB='$mb' CKPT_BENCH_DIGEST_MB='$digest_mb' CKPT_BENCH_INCR_MB='$incr_mb' CKPT_BENCH_ROUNDS=$rounds CRDBG_BUILD=${CRDBG_BUILD:-$top/build} $top/tests/crs/bench-guest.sh >$res/bench.md 2>$res/bench.err" \
	>"$res/vm.log" 2>&1 && [[ -s $res/bench.md ]]; then
	cat "$res/bench.md"
	echo
	echo "Measured in a QEMU/TCG guest (scripts/vm: 2 CPUs, $mem MiB), Debian's 6.1 kernel."
else
	echo
	echo "_The checkpoint benchmark needs the guest (CRIU 3.17 fails on the host kernel); the guest run failed: $(tail -n 1 "$res/vm.log" 2>/dev/null)_"
	exit 1
fi
