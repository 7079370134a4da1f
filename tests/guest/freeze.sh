# SPDX-License-Identifier: GPL-2.0
# Guest group "freeze": the behavioural freeze tests over both backends
# (sourced by tests/guest/run-group). The kmod variants skip, saying why,
# when crdbg.ko cannot be loaded.
# vm-time: 56
if ! insmod_crdbg; then
	echo "freeze: crdbg.ko did not load; the kmod variants will skip"
fi
run_tap freeze "$CRDBG_BUILD/tests/freeze/test_freeze"
