# SPDX-License-Identifier: GPL-2.0
# Guest group "kmod": crdbg.ko's own tests (freeze, permissions, hook push,
# netlink fuzzing, unload while frozen). Sourced by tests/guest/run-group.
# Two CPUs: the freeze and the hook push must catch threads running on
# another CPU.
# vm-options: --cpus 2
# vm-time: 37
kt=$CRDBG_BUILD/tests/kmod

insmod_crdbg
tap_result kmod-load $? "insmod crdbg.ko"

for t in test_kmod_freeze test_kmod_perm test_kmod_hook test_kmod_events test_kmod_stress \
	 test_kmod_fuzz test_kmod_unload; do
	[ -x "$kt/$t" ] && run_tap "kmod-${t#test_kmod_}" "$kt/$t"
done

lsmod | grep -q '^crdbg ' && rmmod crdbg
tap_result kmod-unload $? "rmmod crdbg after the kmod tests"
