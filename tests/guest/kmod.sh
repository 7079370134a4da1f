# SPDX-License-Identifier: GPL-2.0
# Guest group "kmod": crdbg.ko's own tests (freeze, permissions, hook push,
# netlink fuzzing, a hostile local user, unload while frozen). Sourced by
# tests/guest/run-group.
# Two CPUs: the freeze and the hook push must catch threads running on
# another CPU. 102 s beside another guest; on a host shared with more,
# test_kmod_harden's fuzz alone has taken over 6 minutes: hence the
# guest's timeout, and the watchdog's limit above the fuzz's own 600 s
# harness timeout.
# vm-options: --cpus 2 --timeout 2400
# vm-time: 150
kt=$CRDBG_BUILD/tests/kmod

insmod_crdbg
tap_result kmod-load $? "insmod crdbg.ko"

for t in test_kmod_freeze test_kmod_perm test_kmod_hook test_kmod_events test_kmod_stress \
	 test_kmod_fuzz test_kmod_harden test_kmod_unload; do
	[ -x "$kt/$t" ] && CRDBG_TEST_TIMEOUT=900 run_tap "kmod-${t#test_kmod_}" "$kt/$t"
done

# The hardening tests once more as an unprivileged uid (no passwd entry
# needed). What they cannot set up themselves is prepared here: the
# setuid-root helper is a copy in the guest's tmpfs /tmp (the build tree is
# on the read-only 9p export, where no mode can be changed), a cgroup with
# the cpu controller is delegated to the uid and holds the test, and Yama's
# ptrace_scope is 1 for the run.
kuid=12345
if [ -x "$kt/test_kmod_harden" ]; then
	hd=/tmp/crdbg-kmod-suid cg=/sys/fs/cgroup/crdbg-kmod-user
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope)
	mkdir -p $hd && chmod 755 $hd && cp "$kt/test_kmod_harden" $hd/helper &&
		chown 0:0 $hd/helper && chmod 4755 $hd/helper
	echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p $cg && echo +cpu >$cg/cgroup.subtree_control && mkdir -p $cg/main &&
		chown -R $kuid:$kuid $cg
	echo 1 >/proc/sys/kernel/yama/ptrace_scope
	CRDBG_TEST_TIMEOUT=900 run_tap kmod-harden-user sh -c "echo \$\$ >$cg/main/cgroup.procs && exec setpriv \
		--reuid=$kuid --regid=$kuid --clear-groups env CRDBG_KMOD_SUID_HELPER=$hd/helper \
		CRDBG_KMOD_CGROUP=$cg $kt/test_kmod_harden"
	echo "$scope" >/proc/sys/kernel/yama/ptrace_scope
	rmdir $cg/main $cg 2>/dev/null
fi

lsmod | grep -q '^crdbg ' && rmmod crdbg
tap_result kmod-unload $? "rmmod crdbg after the kmod tests"
