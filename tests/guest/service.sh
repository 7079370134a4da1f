# SPDX-License-Identifier: GPL-2.0
# Guest group "service": crdbgd, the node's root service, for two users
# created in the guest (tests/crs/test_service.sh): each checkpoints,
# restarts, lists, verifies and removes their own; neither touches the
# other's; one regression test per attack on root the service stops;
# then a user's job checkpoints through it, from the CLI and from the
# console (tests/crs/test_service_job.sh). A writable root (useradd,
# /etc/crdbg/seal.key, /var/lib/crdbg). 151 s in make check's lane
# (61 s and 83 s):
# vm-options: --overlay --timeout 1800
# vm-time: 180
export CRDBG_TEST_TIMEOUT=1500

ip link set lo up 2>/dev/null
run_tap service-ptrace "$CRDBG_TOP/tests/crs/test_service.sh" ptrace
run_tap service-job-ptrace "$CRDBG_TOP/tests/crs/test_service_job.sh" ptrace
