# SPDX-License-Identifier: GPL-2.0
# Guest group "fidelity": kernel state through checkpoint and restart,
# raw CRIU as the control, crdbg on both freeze backends, killed and
# continued (tests/fidelity/test_fidelity.sh; Documentation/checkpoint.md,
# "What crdbg can and cannot checkpoint"). Some 130 CRIU dumps and
# restores under TCG: the guest gets more time than the default. One CPU
# (make check's default): prog_rseq, whose state is per CPU, runs in the
# two-CPU guest of the group "freeze" instead.
# vm-options: --timeout 2400
# vm-time: 900

ip link set lo up 2>/dev/null
if ! insmod_crdbg 2>/dev/null; then
	tap_result fidelity-kmod-load 1 "crdbg.ko loads for the kmod-backend fidelity modes"
fi
progs=()
for f in "$CRDBG_BUILD"/tests/fidelity/prog_*; do
	[ "${f##*/prog_}" = rseq ] || progs+=("${f##*/prog_}")
done
# Every mode but raw CRIU's continue (criu-cont): a control of CRIU's own,
# a fifth of the group's time; crdbg's continue is judged against the
# dump and restore that raw CRIU does, except for a program with a peer
# outside the tree, which runs criu-cont as its control.
FIDELITY_MODES="criu ptrace kmod cont-kmod" CRDBG_TEST_TIMEOUT=2200 run_tap fidelity "$CRDBG_TOP/tests/fidelity/test_fidelity.sh" "${progs[@]}"
