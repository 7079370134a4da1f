#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every host test binary and every guest test group, collect their TAP
# output under $build/results/, and print the project's summary line.
#   check.sh BUILD "HOST_TESTS" "GUEST_GROUPS"
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
host_tests=$2
guest_groups=$3
results=$build/results
rm -rf "$results"
mkdir -p "$results/host" "$results/guest"

for t in $host_tests; do
	name=$(basename "$t")
	echo "== host: $name"
	(cd "$top" && timeout 600 "$t") >"$results/host/$name.tap" 2>&1
	echo "exit=$?" >"$results/host/$name.exit"
	grep -E '^(not )?ok |^# SKIP|^Bail out' "$results/host/$name.tap" | sed 's/^/   /'
done

for g in $guest_groups; do
	echo "== guest: $g"
	mkdir -p "$results/guest/$g"
	# A group may ask for guest options ("# vm-options: --overlay").
	vmopts=$(sed -n 's/^# vm-options: //p' "$top/tests/guest/$g.sh")
	for attempt in 1 2; do
		"$top/scripts/vm" --timeout "${CRDBG_GUEST_TIMEOUT:-900}" $vmopts \
			--results "$results/guest/$g" -- \
			"$top/tests/guest/run-group" "$g" >>"$results/guest/$g.log" 2>&1
		rc=$?
		# 125: the guest never reported (it died while booting). Boot
		# once more; a group that ran and failed is never retried.
		[ $rc = 125 ] && ! ls "$results/guest/$g"/*.tap >/dev/null 2>&1 || break
		echo "   guest did not boot (attempt $attempt), retrying" | tee -a "$results/guest/$g.log"
	done
	echo "exit=$rc" >"$results/guest/$g.exit"
	cat "$results/guest/$g"/*.tap 2>/dev/null |
		grep -E '^(not )?ok |^Bail out' | sed 's/^/   /'
done

exec "$top/scripts/tap-summary" "$results"
