#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages and the bash completion against what they describe:
# every page renders without a warning; crdbg(1) and `crdbg CMD --help`
# give each command the same synopsis and options; every command crdbg
# dispatches is documented; libcrdbg(3) names every symbol libcrdbg.so
# exports; crdbg.ko(4) names every netlink command and the autoload alias;
# the completion offers commands, options, option values and pids.
# Run from the repository root after make (TAP on stdout).
set -u
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

crdbg=build/crdbg
man=build/man
tmp=$(mktemp -d /tmp/crdbg-docs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"

for page in crdbg.1 libcrdbg.3 crdbg.ko.4; do
	MANWIDTH=80 man -l --warnings=all "$man/$page" >"$tmp/out" 2>"$tmp/err"
	check "man -l renders $page without warnings" \
		eval '[ $? = 0 ] && [ ! -s "$tmp/err" ] && [ $(wc -l <"$tmp/out") -gt 20 ]'
	sed 's/^/# /' "$tmp/err" | head -n 5
done

# Commands: the dispatch table in crdbg.c, crdbg --help and crdbg(1).
dispatched=$(sed -n 's/^\t{ "\([a-z-]*\)", cmd_[a-z_]* },$/\1/p' usr/cli/crdbg.c | sort)
helped=$($crdbg --help | sed -n 's/^  \([a-z-]*\) .*/\1/p' | sort)
manned=$(sed -n 's/^\.SS "crdbg \(.*\)"$/\1/p' "$man/crdbg.1" | sort)
check "every dispatched command is in crdbg --help ($(echo $dispatched))" \
	test -n "$dispatched" -a "$dispatched" = "$helped"
check "every dispatched command has a section in crdbg(1)" test "$dispatched" = "$manned"

# Per command: the synopsis and option flags of --help and of the page.
# (troff escapes '-' as '\-'; the page's section runs to the next .SS/.SH.)
for cmd in $dispatched; do
	$crdbg "$cmd" --help >"$tmp/help" 2>&1
	rc=$?
	awk -v c="$cmd" '/^\.S[SH]/ { on = ($0 == ".SS \"crdbg " c "\"") ; next } on' "$man/crdbg.1" |
		sed 's/\\-/-/g' >"$tmp/sect"
	# Options: --help lines "  FLAG  text"; the page ".TP" then ".B FLAG".
	sed -n 's/^  \(-.*\)$/\1/p' "$tmp/help" | sed 's/  .*//' >"$tmp/hopts"
	awk 'p { sub(/^\.B /, ""); print; p = 0 } /^\.TP$/ { p = 1 }' "$tmp/sect" >"$tmp/mopts"
	# Synopsis: --help's usage lines joined; the page's ".B crdbg" lines.
	hsyn=$(sed -n '/^usage:/,/^[^ u]/p' "$tmp/help" | grep -E '^(usage:|   )' |
		sed 's/^usage: //; s/^ *//' | tr '\n' ' ' | tr -s ' ')
	msyn=$(awk '/^\.B crdbg$/ { getline; printf "crdbg %s ", $0 }' "$tmp/sect" | tr -s ' ')
	check "crdbg $cmd: --help (exit 0) and crdbg(1) list the same options ($(tr '\n' ' ' <"$tmp/mopts"))" \
		eval '[ $rc = 0 ] && cmp -s "$tmp/hopts" "$tmp/mopts"'
	cmp -s "$tmp/hopts" "$tmp/mopts" || diff "$tmp/hopts" "$tmp/mopts" | sed 's/^/# /'
	check "crdbg $cmd: --help and crdbg(1) give the same synopsis" test "$hsyn" = "$msyn"
	[ "$hsyn" = "$msyn" ] || printf '# help: %s\n# man:  %s\n' "$hsyn" "$msyn"
done

# libcrdbg(3): every exported symbol of the library; the header declares the MPIR ones.
syms=$(nm -D --defined-only build/usr/libcrdbg.so | awk '{ print $3 }' | sort)
missing=$(for s in $syms; do grep -q -- "$s" "$man/libcrdbg.3" || echo "$s"; done)
check "libcrdbg(3) names all $(echo $syms | wc -w) symbols libcrdbg.so exports" \
	test -n "$syms" -a -z "$missing"
[ -z "$missing" ] || echo "# undocumented: $missing"
missing=$(for s in $syms; do case $s in MPIR_*) grep -qw "$s" usr/include/crdbg/mpir.h || echo "$s";; esac; done)
check "<crdbg/mpir.h> declares every exported MPIR_ symbol" test -z "$missing"

# crdbg.ko(4): the netlink commands of the UAPI header and the module alias.
cmds=$(sed -n 's/^\t\(CRDBG_CMD_[A-Z_]*\),$/\1/p' kmod/uapi/linux/crdbg.h | grep -v UNSPEC)
missing=$(for c in $cmds; do sed 's/\\-/-/g' "$man/crdbg.ko.4" | grep -q "$c" || echo "$c"; done)
check "crdbg.ko(4) documents every netlink command ($(echo $cmds | wc -w))" \
	test -n "$cmds" -a -z "$missing"
alias=$(modinfo -F alias build/kmod/crdbg.ko 2>/dev/null)
check "crdbg.ko(4) names the module's autoload alias ($alias)" \
	eval '[ -n "$alias" ] && sed "s/\\\\-/-/g" "$man/crdbg.ko.4" | grep -q -- "$alias"'

# Bash completion, driven like bash does: COMP_WORDS/COMP_CWORD, then _crdbg.
complete_words() {
	PATH=$PWD/build:$PATH bash -c '. build/completion/crdbg
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _crdbg
		printf "%s\n" "${COMPREPLY[@]}"' complete "$@" | sort | tr '\n' ' '
}
check "completion: 'crdbg che' offers checkpoint" test "$(complete_words crdbg che)" = "checkpoint "
check "completion: 'crdbg ' offers every command" \
	test "$(complete_words crdbg "" | tr ' ' '\n' | grep -v '^-' | sort | tr '\n' ' ' | sed 's/ $//')" = \
	     "$(echo $dispatched | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check "completion: 'crdbg checkpoint --n' offers --no-debug --no-pre-dump --no-tree" \
	test "$(complete_words crdbg checkpoint --n)" = "--no-debug --no-pre-dump --no-tree "
check "completion: 'crdbg restart --backend ' offers auto kmod ptrace" \
	test "$(complete_words crdbg restart --backend "")" = "auto kmod ptrace "
check "completion: 'crdbg kmod ' offers status" test "$(complete_words crdbg kmod "")" = "status "
sleep 300 &
pid=$!
check "completion: 'crdbg freeze <pid prefix>' offers a running pid" \
	eval 'complete_words crdbg freeze "$pid" | grep -qw "$pid"'
kill $pid
mkdir -p "$tmp/store"
check "completion: 'crdbg rm --store EMPTY ' offers no handle" \
	test "$(complete_words crdbg rm --store "$tmp/store" "")" = " "

echo "1..$n"
exit $((failed > 0))
