# SPDX-License-Identifier: GPL-2.0
# Guest group "freeze": the behavioural freeze tests over both backends
# (sourced by tests/guest/run-group). The kmod variants skip, saying why,
# when crdbg.ko cannot be loaded. Two CPUs: the freeze must catch threads
# that run on another CPU. The fidelity program whose state is per CPU
# (rseq's cpu_id, checked on every CPU after the restart) runs here too,
# for the same reason; the fidelity group's one-CPU guest runs the rest.
# vm-options: --cpus 2
# vm-time: 118
if ! insmod_crdbg; then
	echo "freeze: crdbg.ko did not load; the kmod variants will skip"
fi
run_tap freeze "$CRDBG_BUILD/tests/freeze/test_freeze"
if lsmod | grep -q '^crdbg '; then
	ip link set lo up 2>/dev/null
	run_tap fidelity-rseq "$CRDBG_TOP/tests/fidelity/test_fidelity.sh" rseq
else
	tap_result fidelity-rseq 1 "crdbg.ko loads for the rseq fidelity modes"
fi
