#!/bin/bash
# e2e_coalesce.sh - coalescing TLBs (tlb.coalesce.*) on the command line: the keys,
# their errors (exit 2 with the place), config show, exact counts of a trace whose
# frames are contiguous (pages written in address order) against one whose frames run
# backwards (written in reverse order: no run qualifies), the tlb.coalesced.* rows
# only when an array coalesces, and the default machine unchanged.
# Run from the repository root by tests/run.sh with MMUSIM set.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# 256 pages stored to in address order (fwd) or in reverse (rev), then loaded 3 times in order
gen() {
	awk -v rev="$1" 'BEGIN {
		for (i = 0; i < 256; i++) printf " S %x,8\n", 268435456 + 4096 * (rev ? 255 - i : i)
		for (r = 0; r < 3; r++) for (i = 0; i < 256; i++) printf " L %x,8\n", 268435456 + 4096 * i
	}'
}
gen 0 >"$T/fwd.lackey"
gen 1 >"$T/rev.lackey"
AMD="--set tlb.coalesce.kind=amd --set tlb.coalesce.l1d=true --set tlb.coalesce.stlb=true"
ARM="--set tlb.coalesce.kind=contpte --set tlb.coalesce.l1d=true --set tlb.coalesce.stlb=true"

# --- keys ----------------------------------------------------------------------------
check "$($MMUSIM config show | grep -c coalesce)" 0 "default: no tlb.coalesce written"
check "$($MMUSIM config show $AMD | grep -o 'coalesce: .*')" "coalesce: { kind: amd, l1d: true, stlb: true }" \
	"config show writes the keys set"
for m in zen4 zen5; do
	check "$($MMUSIM config show -c configs/$m.yaml | grep -o 'coalesce: .*')" \
		"coalesce: { kind: amd, l1d: true, stlb: true }" "$m coalesces (L1 DTLB and STLB)"
done
expect_error "--set: tlb.coalesce.kind: amd names no array" $MMUSIM config show --set tlb.coalesce.kind=amd
expect_error "--set: tlb.coalesce.l1i: an array coalesces but tlb.coalesce.kind is none" \
	$MMUSIM config show --set tlb.coalesce.l1i=true
expect_error "--set tlb.coalesce.kind=arm: tlb.coalesce.kind: unknown value 'arm'" \
	$MMUSIM config show --set tlb.coalesce.kind=arm
printf 'tlb:\n  coalesce:\n    kind: amd\n    stlb: 2\n' >"$T/bad.yaml"
expect_error "$T/bad.yaml:4:5: tlb.coalesce.stlb: expected true or false" $MMUSIM config show -c "$T/bad.yaml"

# --- counts ------------------------------------------------------------------------------
# row: L1 dTLB hits, misses, STLB hits, walks, coalesced l1d hits/fills, stlb hits/fills
row() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); t = j["tlb"]; c = t.get("coalesced")
print(t["l1d"]["hits"], t["l1d"]["misses"], t["stlb"]["hits"], j["walk"]["walks"],
      *( [c["l1d"]["hits"], c["l1d"]["fills"], c["stlb"]["hits"], c["stlb"]["fills"]] if c else ["-"]))' "$1"
}
$MMUSIM run "$T/fwd.lackey" --format lackey --json "$T/off.json" -q || bad "run fwd"
check "$(row "$T/off.json")" "0 1024 768 256 -" "fwd, no coalescing: every L1 miss, no coalesced rows"
$MMUSIM run "$T/fwd.lackey" --format lackey $AMD --json "$T/amd.json" -q || bad "run fwd amd"
# the store that maps a run's 4th page walks and finds the run whole: 64 coalesced STLB fills
check "$(row "$T/amd.json")" "720 304 48 256 720 112 48 64" "fwd, amd: 64 runs coalesced"
$MMUSIM run "$T/fwd.lackey" --format lackey $ARM --json "$T/arm.json" -q || bad "run fwd contpte"
check "$(row "$T/arm.json")" "756 268 12 256 621 28 12 16" "fwd, contpte: 16 runs of 16 coalesced"
$MMUSIM run "$T/rev.lackey" --format lackey $AMD --json "$T/rev.json" -q || bad "run rev amd"
check "$(row "$T/rev.json")" "64 960 704 256 0 0 0 0" "rev, amd: frames run backwards, nothing coalesces"
$MMUSIM run "$T/rev.lackey" --format lackey --json "$T/revoff.json" -q || bad "run rev"
check "$(row "$T/revoff.json" | cut -d' ' -f1-4)" "$(row "$T/rev.json" | cut -d' ' -f1-4)" \
	"rev: the same counts with and without coalescing"
# a coalescing machine is deterministic
$MMUSIM run "$T/fwd.lackey" --format lackey $AMD --json "$T/amd2.json" -q || bad "run fwd amd again"
check "$(diff <(strip <"$T/amd.json") <(strip <"$T/amd2.json") && echo same)" same "same input, same report"

echo "  e2e_coalesce: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
