#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every host test binary and every guest test group, collect their TAP
# output under $build/results/, and print the project's summary line.
#   check.sh BUILD "HOST_TESTS" "GUEST_GROUPS"
# The guest groups run in $CRDBG_LANES lanes side by side (default 2; 1 runs
# them one after another; see Documentation/testing.md, "Guest lanes"): a lane
# boots its groups one after another, and the groups are dealt to the
# lanes longest first by the "# vm-time: SECONDS" line of their scripts
# (their wall time measured on an idle machine), each to the lane with
# the least time so far. Every guest gets one CPU (CRDBG_GUEST_CPUS=N
# gives it N), unless its group asks for more ("# vm-options: --cpus 2"):
# two lanes of one-CPU guests keep the two cores busy, where two-CPU
# guests would take turns on them (Documentation/testing.md, "Guest lanes").
# A host test script that boots guests of its own says so the same way
# ("# vm-time: SECONDS") and is dealt to a lane like a group. The other
# host tests run one after another beside the lanes, at nice 10: alone
# they kept one core busy and left the other idle (CRDBG_HOST_BESIDE=0
# runs them first and alone, as before).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
host_tests=$2
guest_groups=$3
lanes=${CRDBG_LANES:-2}
results=$build/results
rm -rf "$results"
mkdir -p "$results/host" "$results/guest"
[[ $lanes =~ ^[1-9][0-9]*$ ]] || { echo "check: CRDBG_LANES wants a positive number, got '$lanes'" >&2; exit 2; }

# script_opt FILE KEY: the value of a shell script's "# KEY: ..." line,
# empty if it has none (or is no script: a host test may be a binary).
script_opt() {
	case $1 in *.sh) [ -f "$1" ] && sed -n "s/^# $2: //p" "$1" ;; esac
}

# run_host TEST [SECONDS]: one host test; its report is printed whole
# (flock), so that it does not interleave with a lane's. Its time is
# added to the file SECONDS (the host stream's) or, for a test run in a
# guest lane, printed with its report.
run_host() {
	local t=$1 seconds=${2:-} name start took
	name=$(basename "$t")
	start=$(date +%s)
	(cd "$top" && timeout 600 "$t") >"$results/host/$name.tap" 2>&1
	echo "exit=$?" >"$results/host/$name.exit"
	took=$(($(date +%s) - start))
	[ -n "$seconds" ] && echo "$took $name" >>"$seconds"
	{
		echo "== host: $name"
		grep -E '^(not )?ok |^# SKIP|^Bail out' "$results/host/$name.tap" | sed 's/^/   /'
		[ -n "$seconds" ] || echo "   $name: $took s in the guest lane"
	} >"$results/host/$name.block"
	flock "$results/.print" cat "$results/host/$name.block"
}

# The host tests that boot guests go to the lanes; the others to the
# host stream.
host_plain=() host_vm=()
for t in $host_tests; do
	if [ -n "$(script_opt "$top/$t" vm-time)" ]; then host_vm+=("$t"); else host_plain+=("$t"); fi
done

# run_host_stream: the plain host tests one after another, then where
# their time went (their slowest).
run_host_stream() {
	local t host_start=$(date +%s)
	for t in "${host_plain[@]}"; do run_host "$t" "$results/host/.seconds"; done
	[ -s "$results/host/.seconds" ] &&
		flock "$results/.print" echo "   host: $(($(date +%s) - host_start)) s;" \
			"$(sort -nr "$results/host/.seconds" | head -n 8 |
			   awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1 }')"
}

# group_opt GROUP KEY: the value of the group script's "# KEY: ..." line.
group_opt() {
	script_opt "$top/tests/guest/$1.sh" "$2"
}

# run_group GROUP: one guest boot for GROUP (once more if the guest never
# came up); its report is printed whole, so that lanes do not interleave.
run_group() {
	local g=$1 vmopts rc attempt start
	mkdir -p "$results/guest/$g"
	# A group may ask for guest options ("# vm-options: --overlay").
	vmopts=$(group_opt "$g" vm-options)
	start=$(date +%s)
	for attempt in 1 2; do
		"$top/scripts/vm" --timeout "${CRDBG_GUEST_TIMEOUT:-900}" \
			--cpus "${CRDBG_GUEST_CPUS:-1}" $vmopts \
			--results "$results/guest/$g" -- \
			"$top/tests/guest/run-group" "$g" >>"$results/guest/$g.log" 2>&1 &
		vm=$!
		wait $vm
		rc=$?
		vm=""
		# 125: the guest never reported (it died while booting). Boot
		# once more; a group that ran and failed is never retried.
		[ $rc = 125 ] && ! ls "$results/guest/$g"/*.tap >/dev/null 2>&1 || break
		echo "   guest did not boot (attempt $attempt), retrying" >>"$results/guest/$g.log"
		echo "   guest did not boot (attempt $attempt), retrying" >>"$results/guest/$g.report"
	done
	echo "exit=$rc" >"$results/guest/$g.exit"
	echo "$(($(date +%s) - start))" >"$results/guest/$g.seconds"
	{
		echo "== guest: $g"
		cat "$results/guest/$g.report" 2>/dev/null
		cat "$results/guest/$g"/*.tap 2>/dev/null |
			grep -E '^(not )?ok |^Bail out' | sed 's/^/   /'
		# where the group's time went: its tests, slowest first
		echo "   $g: $(cat "$results/guest/$g.seconds") s in the guest lane;" \
			"$(for f in "$results/guest/$g"/*.seconds; do
				[ -e "$f" ] && echo "$(cat "$f") $(basename "$f" .seconds)"
			done | sort -nr | awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1 }')"
	} >"$results/guest/$g.block"
	flock "$results/.print" cat "$results/guest/$g.block"
}

# deal_lanes: one line per lane, its items (a guest group, or "host:TEST"
# for a host test that boots guests), longest first; an item with no
# vm-time counts as a minute.
deal_lanes() {
	local g t
	{
		for g in $guest_groups; do
			t=$(group_opt "$g" vm-time)
			echo "${t:-60} $g"
		done
		for g in "${host_vm[@]}"; do
			echo "$(script_opt "$top/$g" vm-time) host:$g"
		done
	} | sort -k1,1nr -k2 | awk -v n="$lanes" '
		{ best = 1
		  for (i = 2; i <= n; i++) if (load[i] < load[best]) best = i
		  load[best] += $1; lane[best] = lane[best] " " $2 }
		END { for (i = 1; i <= n; i++) if (lane[i] != "") print substr(lane[i], 2) }'
}

# run_item ITEM: a guest group, or a host test that boots guests.
run_item() {
	case $1 in
	host:*) run_host "${1#host:}" ;;
	*) run_group "$1" ;;
	esac
}

# A lane stopped (check.sh interrupted) takes its running guest with it.
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait; exit 130' INT TERM
if [ "${CRDBG_HOST_BESIDE:-1}" = 0 ]; then
	run_host_stream
else
	# lower only this subshell: its tests inherit it, the lanes do not
	(renice -n 10 -p "$BASHPID" >/dev/null; run_host_stream) &
	pids+=($!)
fi
while read -r lane; do
	(vm=""; trap '[ -n "$vm" ] && kill "$vm"; exit 143' TERM
	 for g in $lane; do run_item "$g"; done) &
	pids+=($!)
done < <(deal_lanes)
wait "${pids[@]}"
trap - INT TERM

exec "$top/scripts/tap-summary" "$results"
