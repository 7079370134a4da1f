#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The packages `make deb` built (make check builds them first): lintian
# finds no error, and each package holds and depends on what it should.
# Installing them is the guest group "install". Run from the repository
# root (TAP on stdout).
set -u
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

echo "TAP version 13"
deb=$(ls build/deb/crdbg_*_amd64.deb 2>/dev/null | head -n 1)
dkmsdeb=$(ls build/deb/crdbg-dkms_*_all.deb 2>/dev/null | head -n 1)
changes=$(ls build/deb/crdbg_*_amd64.changes 2>/dev/null | head -n 1)
if [ -z "$deb" ] || [ -z "$dkmsdeb" ] || [ -z "$changes" ]; then
	echo "ok 1 the Debian packages # SKIP not built: make deb (make check builds them)"
	echo "1..1"
	exit 0
fi

lintian "$changes" >/tmp/crdbg-lintian.$$ 2>&1
rc=$?
errors=$(grep -c '^E: ' /tmp/crdbg-lintian.$$)
check "lintian reports no error (exit $rc, $errors E: tags)" test "$rc" = 0 -a "$errors" = 0
sed 's/^/# /' /tmp/crdbg-lintian.$$ | grep -v 'root privileges'
rm -f /tmp/crdbg-lintian.$$

files=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
has() { echo "$files" | grep -qx "./$1"; }
check "crdbg holds crdbg, the SDM servers, libcrdbg, its header, man pages, completion" \
	eval 'has usr/bin/crdbg && has usr/libexec/crdbg/sdm-master && has usr/libexec/crdbg/crdbg-server && has usr/libexec/crdbg/crdbg-part &&
	      has usr/lib/x86_64-linux-gnu/libcrdbg.so.0 && has usr/lib/x86_64-linux-gnu/libcrdbg.so &&
	      has usr/include/crdbg/mpir.h && has usr/share/man/man1/crdbg.1.gz &&
	      has usr/share/man/man3/libcrdbg.3.gz && has usr/share/bash-completion/completions/crdbg'
check "crdbg holds crdbgd, its systemd units and a postinst that makes the seal key" \
	eval 'has usr/libexec/crdbg/crdbgd && has lib/systemd/system/crdbgd.socket &&
	      has lib/systemd/system/crdbgd.service &&
	      dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./postinst | grep -q /etc/crdbg/seal.key'
depends=$(dpkg-deb -f "$deb" Depends)
check "crdbg depends on criu, gdb and the libraries it links ($depends)" \
	eval '(for dep in criu gdb libssl3 libreadline8 libnl-genl-3-200; do echo "$depends" | grep -qw -- "$dep" || exit 1; done)'
version=$(dpkg-deb -f "$dkmsdeb" Version)
files=$(dpkg-deb -c "$dkmsdeb" | awk '{ print $6 }')
check "crdbg-dkms holds /usr/src/crdbg-$version with dkms.conf, the module source and crdbg.ko(4)" \
	eval 'has usr/src/crdbg-$version/dkms.conf && has usr/src/crdbg-$version/main.c &&
	      has usr/src/crdbg-$version/Kbuild && has usr/src/crdbg-$version/uapi/linux/crdbg.h &&
	      has usr/share/man/man4/crdbg.ko.4.gz'
check "crdbg-dkms depends on dkms" eval 'dpkg-deb -f "$dkmsdeb" Depends | grep -qw dkms'
# libcrdbg-mpi, one package per MPI, each with its state's debug information.
for mpi in openmpi:ompi:libopenmpi3 mpich:mpich:libmpich12; do
	IFS=: read -r pkg lib rt <<<"$mpi"
	mdeb=$(ls build/deb/crdbg-mpi-${pkg}_*_amd64.deb 2>/dev/null | head -n 1)
	so=usr/lib/x86_64-linux-gnu/crdbg/libcrdbg-mpi-$lib.so
	x=$(mktemp -d /tmp/crdbg-deb.XXXXXX)
	[ -n "$mdeb" ] && dpkg-deb -x "$mdeb" "$x"
	check "crdbg-mpi-$pkg holds $so, unstripped, and depends on crdbg and $rt" \
		eval '[ -n "$mdeb" ] && readelf -S "$x/$so" | grep -q "\.debug_info" &&
		      dpkg-deb -f "$mdeb" Depends | grep -qw crdbg &&
		      dpkg-deb -f "$mdeb" Depends | grep -qw "$rt"'
	rm -rf "$x"
done
check "crdbg-dkms's postinst runs DKMS (dh_dkms)" \
	eval 'dpkg-deb -I "$dkmsdeb" postinst | grep -q "dkms"'

echo "1..$n"
exit $((failed > 0))
