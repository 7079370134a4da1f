#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The crdbg and crdbg-dkms packages on a guest whose root is writable
# (scripts/vm --overlay: writes stay in guest RAM). TAP on stdout.
#
#   dpkg -i  ->  DKMS builds crdbg.ko for `uname -r`  ->  hide the build
#   tree  ->  crdbg kmod status (autoloads the module), checkpoint and
#   restart, debug, man, completion  ->  modprobe  ->  dpkg -r, dpkg -P
#   ->  no file of either package is left.
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
. "$top/tests/guest/tap.sh"
# Each result says when it came (seconds into the run), to see what is slow.
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; echo "# at ${SECONDS}s"; }
backend=install
work=$(mktemp -d /tmp/crdbg-install.XXXXXX)
kver=$(uname -r)

if ! touch /usr/.crdbg-rw 2>/dev/null; then
	echo "1..1"
	skip "install the packages" "the root is read-only: boot the guest with scripts/vm --overlay"
	exit 0
fi
rm -f /usr/.crdbg-rw

deb=$(ls "$build"/deb/crdbg_*_amd64.deb 2>/dev/null | head -n 1)
dkmsdeb=$(ls "$build"/deb/crdbg-dkms_*_all.deb 2>/dev/null | head -n 1)
mpideb=$(ls "$build"/deb/crdbg-mpi-mpich_*_amd64.deb 2>/dev/null | head -n 1)
check "make deb built crdbg, crdbg-dkms and crdbg-mpi-mpich in $build/deb" \
	test -n "$deb" -a -n "$dkmsdeb" -a -n "$mpideb"
if [ -z "$deb" ] || [ -z "$dkmsdeb" ] || [ -z "$mpideb" ]; then
	echo "1..$n"
	exit 1
fi
version=$(dpkg-deb -f "$deb" Version)
# Every file the packages ship, to check that purging removes them.
dpkg-deb -c "$deb" >"$work/files"
dpkg-deb -c "$dkmsdeb" >>"$work/files"
dpkg-deb -c "$mpideb" >>"$work/files"
awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' "$work/files" >"$work/shipped"

# man-db's trigger would rebuild the whole index over 9p (minutes under
# TCG); the pages are found by path without it.
rm -f /var/lib/man-db/auto-update

dpkg -i "$dkmsdeb" "$deb" "$mpideb" >"$work/dpkg.log" 2>&1
rc=$?
check "dpkg -i crdbg-dkms crdbg crdbg-mpi-mpich succeeds (dependencies present)" test $rc = 0
[ $rc = 0 ] || diag "$work/dpkg.log"
check "the postinst made the node's seal key: 32 bytes, root's, mode 600" \
	eval '[[ $(stat -c "%s %u %a" /etc/crdbg/seal.key 2>/dev/null) == "32 0 600" ]]'
check "DKMS built and installed crdbg $version for the guest kernel $kver" \
	eval 'dkms status crdbg | grep -q "^crdbg/$version, $kver, [^:]*: installed"'
dkms status crdbg | sed 's/^/# /'
check "modinfo finds crdbg.ko $version in updates/dkms, with the genl family alias" \
	eval '[ "$(modinfo -F version crdbg)" = "$version" ] &&
	      modinfo -n crdbg | grep -q "^/lib/modules/$kver/updates/dkms/crdbg.ko" &&
	      modinfo -F alias crdbg | grep -qx net-pf-16-proto-16-family-crdbg'
check "crdbg.ko is not loaded before first use" eval '! grep -q "^crdbg " /proc/modules'

# What the installed programs use, copied out of the build tree.
cp "$build/tests/crs/prog_ckpt" "$build/tests/debug/prog_debug" \
	"$build/tests/debug/mpi_debug_mpich" "$work/"
printf 'bt\nquit\n' >"$work/batch"

# The installed crdbg with the build tree hidden: a private mount namespace
# with an empty tmpfs over the build directory (not over the repository:
# when that is a mount of its own, CRIU refuses to dump a process that
# sees an overmounted mount). Results come back as "PASS|FAIL description"
# lines.
cat >"$work/hidden.sh" <<'HIDDEN'
set -u
work=$1 version=$2 build=$3
mount -t tmpfs none "$build" || exit 1
res() { if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2"; fi; echo "# at ${SECONDS}s"; }
export PATH=/usr/sbin:/usr/bin:/sbin:/bin CRDBG_STORE=$work/store CKPT_GO=$work/go
unset CRDBG_SDM_BINDIR CRDBG_BIN

[ ! -e "$build/crdbg" ] && [ "$(command -v crdbg)" = /usr/bin/crdbg ]
res $? "the build tree is hidden and crdbg is /usr/bin/crdbg"

crdbg kmod status >"$work/status" 2>&1
grep -q "^crdbg.ko $version loaded" "$work/status" && grep -q '^crdbg ' /proc/modules
res $? "crdbg kmod status autoloads crdbg.ko through its genl family and reports $version"
sed 's/^/# /' "$work/status"

# Checkpoint with the kmod backend, kill, restart: LD_PRELOAD by bare name
# finds the installed libcrdbg through ld.so's cache.
LD_PRELOAD=libcrdbg.so setsid "$work/prog_ckpt" 2 20 20 >"$work/p.out" 2>"$work/p.err" </dev/null &
pid=$!
for i in $(seq 3000); do grep -q '^step 5$' "$work/p.out" && break; sleep 0.1; done
h=$(crdbg checkpoint "$pid" --kill --backend kmod 2>"$work/ck.err")
rc=$?
nolib=$(grep -c 'does not use libcrdbg' "$work/ck.err")
[ $rc = 0 ] && [ -n "$h" ] && [ "$nolib" = 0 ]
res $? "installed crdbg checkpoints a program using the installed libcrdbg (kmod backend)"
sed 's/^/# /' "$work/ck.err" | head -n 5
if [ -z "$h" ] && kill -0 "$pid" 2>/dev/null; then
	mkdir -p "$work/dump" && criu dump -t "$pid" -D "$work/dump" -o dump.log -v4 --leave-running
	grep -E 'Error|Warn' "$work/dump/dump.log" | grep -v 'util.c' | head -n 5 | sed 's/^/# criu: /'
	kill -9 "$pid"
fi
for i in $(seq 3000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
touch "$CKPT_GO"
rc=1
if [ -n "$h" ]; then
	timeout 300 crdbg restart "$h" --backend kmod >"$work/rs.out" 2>&1
	rc=$?
fi
[ $rc = 0 ] && grep -q '^step 19$' "$work/p.out" && grep -q '^done checkpointable=1 ' "$work/p.out"
res $? "installed crdbg restarts it and it runs to the end (checkpointable=1)"
[ $rc = 0 ] || sed 's/^/# /' "$work/rs.out" 2>/dev/null | head -n 10

# Completion of crdbg rm from the installed file: offers the handle.
bash -c '. /usr/share/bash-completion/completions/crdbg
	COMP_WORDS=(crdbg rm ""); COMP_CWORD=2; _crdbg; printf "%s\n" "${COMPREPLY[@]}"' \
	>"$work/compl"
[ -n "$h" ] && grep -qx "$h" "$work/compl"
res $? "'crdbg rm <Tab>' offers the checkpoint's handle"
[ -n "$h" ] && crdbg rm "$h" && ! crdbg list | grep -q "^$h "
res $? "crdbg rm deletes it"

for page in crdbg libcrdbg crdbg.ko; do
	f=$(man -w "$page" 2>/dev/null)
	man -l --warnings=all "$f" >"$work/man.out" 2>"$work/man.err"
	[ $? = 0 ] && [ ! -s "$work/man.err" ] && [ "$(wc -l <"$work/man.out")" -gt 20 ]
	res $? "man -w $page finds the installed page ($f) and man -l renders it without warnings"
done

timeout 300 crdbg debug -n 2 --batch "$work/batch" "$work/prog_debug" >"$work/dbg.out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^\[0-1\]: stopped: .*main' "$work/dbg.out" &&
	grep -q '^\[0-1\]: #0  main' "$work/dbg.out"
res $? "installed crdbg debug -n 2 (servers from /usr/libexec/crdbg) stops both ranks at main"
[ $rc = 0 ] || sed 's/^/# /' "$work/dbg.out" | tail -n 10

# MPICH's hydra (no MPIR) with the installed libcrdbg-mpi in its ranks:
# held in MPI_Init, acquired, their MPI state read through gdb by its type
# (the library kept its debug information), a breakpoint reached.
lib=$(ls /usr/lib/*/crdbg/libcrdbg-mpi-mpich.so 2>/dev/null | head -n 1)
timeout 300 crdbg debug --mpi-hold -ex "break mpi_debug.c:51" -ex continue \
	-ex "print value" -ex kill -- mpiexec.hydra -n 2 -genv LD_PRELOAD "$lib" \
	"$work/mpi_debug_mpich" </dev/null >"$work/hold.out" 2>&1
rc=$?
[ $rc = 0 ] && [ -n "$lib" ] && grep -q '^\[0-1\]: libcrdbg-mpi: step and next are parallel steps' "$work/hold.out" &&
	grep -q '^\[0-1\]: stopped: breakpoint 1, main at .*mpi_debug.c:51' "$work/hold.out" &&
	grep -q '^\[0\]: value = 4' "$work/hold.out"
res $? "installed libcrdbg-mpi-mpich.so ($lib) under crdbg debug --mpi-hold: ranks held, its MPI state read, breakpoint reached"
[ -n "$lib" ] && grep -q "value = 4" "$work/hold.out" || sed 's/^/# /' "$work/hold.out" | tail -n 15
HIDDEN
unshare -m bash "$work/hidden.sh" "$work" "$version" "$build" >"$work/hidden.out" 2>&1
hrc=$?
while read -r st desc; do
	case $st in
	PASS) ok "$desc" ;;
	FAIL) not_ok "$desc" ;;
	\#) echo "$st $desc" ;;
	esac
done <"$work/hidden.out"
[ $hrc = 0 ] || not_ok "the hidden-build-tree checks ran (exit $hrc)"

# modprobe, by hand this time.
modprobe -r crdbg && ! grep -q '^crdbg ' /proc/modules && modprobe crdbg &&
	grep -q '^crdbg ' /proc/modules && crdbg kmod status >/dev/null
check "modprobe -r crdbg, then modprobe crdbg loads it again" test $? = 0
modprobe -r crdbg

# Remove, then purge: nothing of either package may be left.
# (dpkg -P removes, then purges: one pass over the package database, which
# is slow to read over 9p under TCG.)
dpkg -P crdbg-mpi-mpich crdbg crdbg-dkms >"$work/purge.log" 2>&1
rc=$?
check "dpkg -P crdbg-mpi-mpich crdbg crdbg-dkms succeeds, and DKMS removed the module" \
	eval '[ $rc = 0 ] && [ ! -e /lib/modules/$kver/updates/dkms/crdbg.ko ] && ! modinfo crdbg >/dev/null 2>&1'
[ $rc = 0 ] || diag "$work/purge.log"
left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done <"$work/shipped")
left+=$(ls -d /var/lib/dkms/crdbg /usr/src/crdbg-* /usr/libexec/crdbg /usr/include/crdbg \
	/usr/lib/*/crdbg /etc/crdbg 2>/dev/null)
check "purged: no file any package shipped or DKMS built is left" \
	eval '[ -z "$left" ] && ! dpkg -s crdbg >/dev/null 2>&1 && ! dpkg -s crdbg-dkms >/dev/null 2>&1 &&
	      ! dpkg -s crdbg-mpi-mpich >/dev/null 2>&1'
[ -z "$left" ] || echo "$left" | sed 's/^/# left: /'
rm -rf "$work"
echo "1..$n"
exit $((failed > 0))
