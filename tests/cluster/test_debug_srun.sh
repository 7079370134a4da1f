#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's host part of the multi-node debug tests: the srun session
# of test_debug_cluster.sh to its clean end (nothing left on any node).
# The guest group clusterdebug runs every other session (--tcg), where
# the srun session ends with node2 lost instead.
exec "$(dirname "$0")/test_debug_cluster.sh" --srun
