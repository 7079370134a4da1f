#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make install DESTDIR=... puts every file in place with the right mode;
# the installed crdbg runs a debug session with the build tree hidden (it
# finds its SDM servers by install paths); make uninstall removes every
# file. Run from the repository root after make (TAP on stdout).
set -u
top=$(pwd)
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }

tmp=$(mktemp -d /tmp/crdbg-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
version=$(make -s --no-print-directory print-VERSION)
echo "TAP version 13"

make -s --no-print-directory install DESTDIR="$dest" >"$tmp/install.log" 2>&1
check "make install DESTDIR=... PREFIX=/usr/local (default) succeeds" test $? = 0
sed 's/^/# /' "$tmp/install.log" | tail -n 5

p=$dest/usr/local
expect_file() { # MODE PATH
	[[ -f $2 && $(stat -c %a "$2") == "$1" ]]
}
check "crdbg in PREFIX/bin, mode 755" expect_file 755 "$p/bin/crdbg"
check "sdm-master, crdbg-server and crdbg-part in PREFIX/libexec/crdbg" \
	eval 'expect_file 755 "$p/libexec/crdbg/sdm-master" && expect_file 755 "$p/libexec/crdbg/crdbg-server" &&
	      expect_file 755 "$p/libexec/crdbg/crdbg-part"'
check "crdbgd in PREFIX/libexec/crdbg, its socket and service units in PREFIX/lib/systemd/system" \
	eval 'expect_file 755 "$p/libexec/crdbg/crdbgd" && expect_file 644 "$p/lib/systemd/system/crdbgd.socket" &&
	      grep -qx "ExecStart=/usr/local/libexec/crdbg/crdbgd" "$p/lib/systemd/system/crdbgd.service" &&
	      grep -qx "ListenSequentialPacket=/run/crdbg/crdbgd.sock" "$p/lib/systemd/system/crdbgd.socket"'
check "libcrdbg.so.0 in PREFIX/lib with the libcrdbg.so link" \
	eval 'expect_file 644 "$p/lib/libcrdbg.so.0" && [[ $(readlink "$p/lib/libcrdbg.so") == libcrdbg.so.0 ]]'
check "libcrdbg's soname is libcrdbg.so.0" \
	eval 'objdump -p "$p/lib/libcrdbg.so.0" | grep -q "SONAME *libcrdbg.so.0"'
check "public header PREFIX/include/crdbg/mpir.h" expect_file 644 "$p/include/crdbg/mpir.h"
# libcrdbg-mpi, for each MPI whose mpicc this machine has (usr/pmpi/pmpi.mk).
for mpi in ompi:mpicc.openmpi mpich:mpicc.mpich; do
	lib=$p/lib/crdbg/libcrdbg-mpi-${mpi%%:*}.so
	if command -v "${mpi#*:}" >/dev/null; then
		check "libcrdbg-mpi-${mpi%%:*}.so in PREFIX/lib/crdbg, mode 644, with its state's debug information" \
			eval 'expect_file 644 "$lib" && readelf -S "$lib" | grep -q "\.debug_info"'
	else
		skip "libcrdbg-mpi-${mpi%%:*}.so in PREFIX/lib/crdbg" "no ${mpi#*:} here: not built"
	fi
done
check "man pages crdbg.1, libcrdbg.3, crdbg.ko.4" \
	eval 'expect_file 644 "$p/share/man/man1/crdbg.1" && expect_file 644 "$p/share/man/man3/libcrdbg.3" && expect_file 644 "$p/share/man/man4/crdbg.ko.4"'
check "bash completion in PREFIX/share/bash-completion/completions" \
	expect_file 644 "$p/share/bash-completion/completions/crdbg"
src=$dest/usr/src/crdbg-$version
check "module source for DKMS in /usr/src/crdbg-$version (every kmod/ file, the UAPI header)" \
	eval '(for f in kmod/*.c kmod/*.h kmod/Kbuild; do cmp -s "$f" "$src/${f#kmod/}" || exit 1; done) && cmp -s kmod/uapi/linux/crdbg.h "$src/uapi/linux/crdbg.h"'
check "dkms.conf names crdbg $version and builds crdbg.ko" \
	eval 'grep -qx "PACKAGE_VERSION=\"$version\"" "$src/dkms.conf" && grep -qx "BUILT_MODULE_NAME\[0\]=\"crdbg\"" "$src/dkms.conf"'

# A program compiles against the installed header and links the installed library.
cat >"$tmp/uses.c" <<'C'
#include <crdbg/mpir.h>
int main(void) { return MPIR_checkpointable == 1 ? 0 : 1; }
C
check "a program builds with -I PREFIX/include -lcrdbg and sees MPIR_checkpointable" \
	eval 'cc -o "$tmp/uses" "$tmp/uses.c" -I"$p/include" -L"$p/lib" -lcrdbg &&
	      LD_LIBRARY_PATH="$p/lib" CRDBG_NO_AGENT=1 "$tmp/uses"'

# The installed crdbg with the build tree hidden (a private mount namespace).
cp build/tests/debug/prog_debug "$tmp/prog"
printf 'bt\nquit\n' >"$tmp/batch"
if unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount -t tmpfs none "$1/build" && shift &&
		timeout 120 "$@"' sh "$top" "$p/bin/crdbg" debug -n 2 --batch "$tmp/batch" "$tmp/prog" \
		>"$tmp/debug.out" 2>&1
	rc=$?
	check "installed crdbg, build tree hidden: 'crdbg debug -n 2' stops both ranks at main" \
		eval '[ $rc = 0 ] && grep -q "^\[0-1\]: stopped: .*main" "$tmp/debug.out" &&
		      grep -q "^\[0-1\]: #0  main" "$tmp/debug.out"'
	[ $rc = 0 ] || sed 's/^/# /' "$tmp/debug.out" | tail -n 10
else
	skip "installed crdbg with the build tree hidden" "unshare -m is not permitted here"
fi

make -s --no-print-directory uninstall DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1
left=$(find "$dest" ! -type d)
check "make uninstall removes every installed file" test -z "$left"
[ -z "$left" ] || echo "$left" | sed 's/^/# left: /'

# Debian's layout: PREFIX=/usr, multiarch LIBDIR.
make -s --no-print-directory install DESTDIR="$dest" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu \
	>/dev/null 2>&1
check "PREFIX=/usr LIBDIR=... installs under /usr" \
	eval '[ -x "$dest/usr/bin/crdbg" ] && [ -f "$dest/usr/lib/x86_64-linux-gnu/libcrdbg.so.0" ] &&
	      [ -x "$dest/usr/libexec/crdbg/crdbg-server" ] && [ -z "$(find "$dest/usr/local" ! -type d)" ]'

echo "1..$n"
exit $((failed > 0))
