#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages crdbg needs to build, test, package and
# demo (the build itself extracts the kselftest headers from
# linux-source-6.1: tests/kselftest.mk). Idempotent: does nothing when
# everything is present.
set -euo pipefail

packages=(
	build-essential make pkg-config gfortran
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	qemu-system-x86 busybox-static kmod
	criu gdb tmux
	libreadline-dev libnl-3-dev libnl-genl-3-dev
	openmpi-bin libopenmpi-dev mpich libmpich-dev
	hpcc lammps
	slurm-wlm munge
	clang libclang-rt-14-dev libssl-dev libxxhash-dev
	iproute2 procps python3 xz-utils cpio util-linux hyperfine
	debhelper dkms dh-dkms lintian man-db
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
	if [[ $(id -u) != 0 ]]; then
		echo "deps: missing packages: ${missing[*]}; run 'make deps' as root" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
