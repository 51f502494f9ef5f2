#!/bin/bash
# e2e_deps.sh - dependences on the command line (mtr version 4's DEP records,
# trace_reader.deps): `trace info` prints them for a source that records them
# (a built-in workload, its `trace gen` trace, its conversion) and says "not
# recorded" otherwise (lackey, mtr before version 4); a corrupt DEP is one line
# and exit 2; replaying a trace with DEP records counts and times exactly what
# the workload does (the additive core ignores them); a `capture --roi` of
# tests/capture/deps.c list/sweep shows the dependent and the independent
# walk (skipped without valgrind or mmusim's tool). Run from the repository
# root by tests/run.sh (make check) with MMUSIM set to the binary under test.
# tests/check_trace.c, check_workload.c and check_capture_tool.c check the details.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

dep_line() { "$MMUSIM" trace info "$1" | grep '^dependences:'; }

# --- workloads and trace gen/convert: version 4, the flag, the DEP records kept ---------
"$MMUSIM" trace gen -w chase:size=64K,steps=3000 -o "$T/chase.mtr" || bad "trace gen chase"
check "$(od -An -tu1 -j8 -N3 "$T/chase.mtr" | tr -s ' ')" " 4 0 1" "trace gen chase: version 4, flag 1"
check "$(dep_line "$T/chase.mtr")" "dependences:  2999 (2999 on the load right before, the farthest 1 loads back)" \
	"trace info of a chase"
"$MMUSIM" trace convert "$T/chase.mtr" "$T/chase2.mtr.zst" || bad "trace convert of version 4"
check "$(dep_line "$T/chase2.mtr.zst")" "$(dep_line "$T/chase.mtr")" "trace convert keeps the DEP records"
"$MMUSIM" trace gen -w gups:size=64K,updates=1000 -o "$T/gups.mtr" || bad "trace gen gups"
check "$(dep_line "$T/gups.mtr")" "dependences:  0 (0 on the load right before, the farthest 0 loads back)" \
	"trace info of GUPS: recorded, none"
check "$(dep_line tests/validation/small.lackey.zst)" "dependences:  not recorded (lackey)" "trace info of lackey"
"$MMUSIM" trace convert tests/validation/small.lackey.zst "$T/small.mtr" || bad "trace convert lackey"
check "$(od -An -tu1 -j8 -N3 "$T/small.mtr" | tr -s ' ')" " 1 0 0" "a lackey conversion claims no dependences"
check "$(dep_line "$T/small.mtr")" "dependences:  not recorded (mtr version 1)" "trace info of its conversion"

# --- the additive core ignores them: the trace replays as the workload ------------------
"$MMUSIM" run -w chase:size=64K,steps=3000 --json "$T/w.json" --quiet || bad "run -w chase"
"$MMUSIM" run "$T/chase.mtr" --json "$T/t.json" --quiet || bad "run chase.mtr"
for k in "cycles total" "cycles translation" "cycles fault" "walk walks" "walk pte_reads"; do
	check "$(field "$T/t.json" $k)" "$(field "$T/w.json" $k)" "chase trace and workload: $k"
done
check "$(field "$T/t.json" refs load)" 3000 "chase trace: 3000 loads replayed"

# --- a corrupt DEP: exit 2, one line ------------------------------------------------------
# header version 4 flag 1; load 8 bytes at 0x1000, DEP 2 (one load before it), load, END 3
printf '\211MTR\r\n\032\n\004\000\001\000\000\000\000\000\141\200\100\312\002\041\300\003' >"$T/bad.mtr"
expect_error "$T/bad.mtr: corrupt mtr trace at byte 19: bad dependence" "$MMUSIM" run "$T/bad.mtr"
check "$(wc -l <"$T/err")" 1 "a bad dependence is one line"
printf '\211MTR\r\n\032\n\007\000\000\000\000\000\000\000\300\000' >"$T/v7.mtr"
expect_error "$T/v7.mtr: unsupported mtr version 7 (this build reads versions 1 to 6)" "$MMUSIM" trace info "$T/v7.mtr"

# --- a capture: the list walk depends on each load, the array sweep on none ---------------
if command -v valgrind >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 &&
	"$MMUSIM" capture -o "$T/true.mtr" -- true >/dev/null 2>&1 &&
	cc -std=gnu11 -O1 -static -no-pie -Iinclude -o "$T/deps" tests/capture/deps.c 2>/dev/null; then
	setarch=""
	setarch -R true 2>/dev/null && setarch="setarch -R"
	$setarch "$MMUSIM" capture --roi -o "$T/list.mtr.zst" -- "$T/deps" list >/dev/null 2>&1 || bad "capture list"
	$setarch "$MMUSIM" capture --roi -o "$T/sweep.mtr.zst" -- "$T/deps" sweep >/dev/null 2>&1 || bad "capture sweep"
	check "$(dep_line "$T/list.mtr.zst")" "dependences:  999 (999 on the load right before, the farthest 1 loads back)" \
		"capture of a list walk"
	check "$(dep_line "$T/sweep.mtr.zst")" "dependences:  0 (0 on the load right before, the farthest 0 loads back)" \
		"capture of an array sweep"
else
	echo "  e2e_deps: capture checks skipped (needs valgrind, cc and mmusim's Valgrind tool)"
fi

echo "  e2e_deps: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
