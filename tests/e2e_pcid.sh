#!/bin/bash
# e2e_pcid.sh - cpu.pcid on the command line: config show writes it only when true,
# the machine files that have PCIDs say so, a bad value is exit 2 with its place, and
# a run of one process (which never switches address spaces) reports the same counts
# with PCIDs as without, and no tlb.cr3 rows (tests/check_asid.c has the switches).
# Run from the repository root by tests/run.sh with MMUSIM set.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# --- the key ---------------------------------------------------------------------------
check "$($MMUSIM config show | grep -c pcid)" 0 "default (Nehalem): cpu.pcid left out"
check "$($MMUSIM config show --set cpu.pcid=true | grep -o 'pcid: true')" "pcid: true" \
	"--set cpu.pcid=true: written"
$MMUSIM config show --set cpu.pcid=true >"$T/p.yaml" || bad "config show"
check "$($MMUSIM config show -c "$T/p.yaml" | cmp - "$T/p.yaml" && echo same)" same \
	"config show with cpu.pcid loads back unchanged"
for m in skylake golden-cove zen4; do
	check "$($MMUSIM config show -c configs/$m.yaml | grep -o 'pcid: true')" "pcid: true" "$m has PCIDs"
done
check "$($MMUSIM config show -c configs/zen5.yaml | grep -c pcid)" 0 "zen5 (a guest without PCID): left out"
expect_error "--set cpu.pcid=maybe" $MMUSIM config show --set cpu.pcid=maybe
printf 'cpu:\n  pcid: 3\n' >"$T/bad.yaml"
expect_error "$T/bad.yaml:2:3: cpu.pcid: expected true or false" $MMUSIM config show -c "$T/bad.yaml"

# --- one process: nothing switches ---------------------------------------------------------
$MMUSIM run tests/validation/small.lackey.zst --json "$T/off.json" -q || bad "run without PCIDs"
$MMUSIM run tests/validation/small.lackey.zst --set cpu.pcid=true --json "$T/on.json" -q || bad "run with PCIDs"
check "$(diff <(strip <"$T/off.json" | grep -v config_hash) <(strip <"$T/on.json" | grep -v config_hash) && echo same)" \
	same "one process: the same report with cpu.pcid true"
check "$(grep -c '"cr3"' "$T/on.json")" 0 "one process: no tlb.cr3 rows"
$MMUSIM run tests/validation/small.lackey.zst --set cpu.pcid=true -q >"$T/on.txt" || bad "text run"
check "$(grep -c 'CR3' "$T/on.txt")" 0 "one process: no CR3 line in the table"

echo "  e2e_pcid: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
