#!/bin/bash
# e2e_populate.sh - populating and mlock on the command line: an mtr version 5
# trace (the mlock family's EVENT kinds 7 to 10) replayed with the faults at
# the calls (mlock, MAP_POPULATE, MADV_POPULATE_WRITE, mlockall(MCL_FUTURE)),
# `trace info` counting the calls, `trace convert` keeping version 5; the same
# kinds in a version 4 header are one line and exit 2; a capture of
# tests/native/steps.c's mlock cases records the calls (skipped without
# valgrind or mmusim's tool). Run from the repository root by tests/run.sh
# (make check) with MMUSIM set to the binary under test. tests/check_populate.c
# and check_trace.c check the details; tests/native.sh compares with the kernel.
MMUSIM=${MMUSIM:-./mmusim}
case $MMUSIM in /*) ;; */*) MMUSIM=$PWD/$MMUSIM ;; esac # the captures run in $T
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# The trace is built as text of octal escapes (o N: one byte) and written with printf %b.
o() { printf '\\%03o' "$1"; }
# a varint of N
v() {
	local x=$1 t=""
	while [ "$x" -ge 128 ]; do t="$t$(o $(((x & 127) | 128)))"; x=$((x >> 7)); done
	printf '%s' "$t$(o "$x")"
}
# an EVENT record: kind prot flags fd advice addr len (new_addr, new_len, line 0)
ev() { printf '%s' "$(o 193)$(o "$1")$(v "$2")$(v "$3")$(v $(($4 < 0 ? -2 * $4 - 1 : 2 * $4)))$(v "$5")$(v "$6")$(v "$7")$(o 0)$(o 0)$(o 0)"; }
# trace VERSION MMAP-FLAGS CALL-RECORD END-COUNT: mmap 64 KiB at 0x40000000, the call, a store to
# each of its first 4 pages (form 2, absolute: tag 0x80 | size 8 << 2 | store = 0xa2, 7 address
# bytes), END: 16 faults where the 64 KiB are populated, 4 where not
trace() {
	local t a
	t="$(o 137)MTR$(o 13)$(o 10)$(o 26)$(o 10)$(o "$1")$(o 0)$(o 0)$(o 0)$(o 0)$(o 0)$(o 0)$(o 0)"
	t="$t$(ev 0 3 "$2" -1 0 $((0x40000000)) 65536)$3"
	for i in 0 1 2 3; do
		a=$((0x40000000 + 4096 * i))
		t="$t$(o 162)"
		for b in 0 1 2 3 4 5 6; do t="$t$(o $(((a >> (8 * b)) & 255)))"; done
	done
	printf '%b' "$t$(o 192)$(v "$4")" >"$T/t.mtr"
}
faults() { "$MMUSIM" run "$T/t.mtr" --json - -q | field /dev/stdin vmstat pgfault; }

MLOCK=$(ev 7 0 0 -1 0 $((0x40000000)) 65536)
trace 5 34 "$MLOCK" 6
check "$(faults)" 16 "mlock of 64 KiB: 16 faults, the stores none"
check "$("$MMUSIM" trace info "$T/t.mtr" | grep '^events:')" \
	"events:       mmap 1 munmap 0 mprotect 0 madvise 0 brk 0 mremap 0 mlock 1 munlock 0 mlockall 0 munlockall 0" \
	"trace info counts the mlock"
"$MMUSIM" trace convert "$T/t.mtr" "$T/c.mtr" || bad "trace convert of version 5"
check "$(od -An -tu1 -j8 -N1 "$T/c.mtr" | tr -d ' ')" 5 "trace convert keeps version 5"
check "$("$MMUSIM" trace info "$T/c.mtr" | grep '^events:')" "$("$MMUSIM" trace info "$T/t.mtr" | grep '^events:')" \
	"trace convert keeps the mlock"
trace 5 34 "$(ev 7 0 1 -1 0 $((0x40000000)) 65536)" 6 # mlock2(MLOCK_ONFAULT)
check "$(faults)" 4 "mlock2(MLOCK_ONFAULT): the 4 faults at the stores"
# MAP_POPULATE and MADV_POPULATE_WRITE need no version 5
trace 1 $((0x8022)) "" 5
check "$(faults)" 16 "MAP_POPULATE: 16 faults at the mmap"
trace 1 $((0x18022)) "" 5
check "$(faults)" 4 "MAP_POPULATE | MAP_NONBLOCK: the 4 faults at the stores"
trace 1 34 "$(ev 3 0 0 -1 23 $((0x40000000)) 65536)" 6 # MADV_POPULATE_WRITE (23)
check "$(faults)" 16 "MADV_POPULATE_WRITE: 16 faults"
trace 1 34 "" 5
check "$(faults)" 4 "no call: the 4 faults at the stores"
trace 4 34 "$MLOCK" 6
expect_error "$T/t.mtr: corrupt mtr trace at byte 33: bad event kind" "$MMUSIM" run "$T/t.mtr"
check "$(wc -l <"$T/err")" 1 "an mlock in version 4 is one line"

# --- a capture of steps.c's mlock calls: version 6 (5 and the processes), the calls counted --------------------
if command -v valgrind >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 &&
	"$MMUSIM" capture -o "$T/true.mtr" -- true >/dev/null 2>&1 &&
	cc -std=gnu11 -O1 -static -no-pie -o "$T/steps" tests/native/steps.c 2>/dev/null; then
	for c in mlock mlockall; do
		(cd "$T" && "$MMUSIM" capture -o "$T/$c.mtr" -- "$T/steps" $c "$T" >/dev/null 2>&1) || bad "capture $c"
		check "$(od -An -tu1 -j8 -N1 "$T/$c.mtr" | tr -d ' ')" 6 "a capture is version 6 (5 and the processes)"
	done
	check "$("$MMUSIM" trace info "$T/mlock.mtr" | grep '^events:' | grep -o 'mlock.*')" \
		"mlock 2 munlock 2 mlockall 0 munlockall 0" "capture of mlock/munlock"
	check "$("$MMUSIM" trace info "$T/mlockall.mtr" | grep '^events:' | grep -o 'mlock [0-9].*')" \
		"mlock 0 munlock 0 mlockall 2 munlockall 1" "capture of mlockall/munlockall"
else
	echo "  e2e_populate: capture checks skipped (needs valgrind, cc and mmusim's Valgrind tool)"
fi

echo "  e2e_populate: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
