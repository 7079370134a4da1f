# SPDX-License-Identifier: GPL-2.0
# Guest group "fidelity": kernel state through checkpoint and restart,
# raw CRIU as the control, crdbg on both freeze backends, killed and
# continued (tests/fidelity/test_fidelity.sh; Documentation/checkpoint.md,
# "What crdbg can and cannot checkpoint"). Some 130 CRIU dumps and
# restores under TCG: the guest gets more time than the default.
# vm-options: --timeout 2400
# vm-time: 650

ip link set lo up 2>/dev/null
if ! insmod_crdbg 2>/dev/null; then
	tap_result fidelity-kmod-load 1 "crdbg.ko loads for the kmod-backend fidelity modes"
fi
CRDBG_TEST_TIMEOUT=2200 run_tap fidelity "$CRDBG_TOP/tests/fidelity/test_fidelity.sh"
