#!/bin/bash
# e2e_roi.sh - the region of interest on the command line (run --skip-refs,
# --warmup-refs, --sim-refs and the -insns forms; sim/roi.c): bad values are one
# line and exit 2; --sim-refs counts exactly N references and says so in run.roi;
# --modes (the threaded pool) gives each mode what its own run gives; a sweep
# takes the roi.* keys in set: and sweep:, and a resumed sweep reruns a point
# whose region changed. Run from the repository root by tests/run.sh (make check)
# with MMUSIM set to the binary under test. tests/check_roi.c checks the counts.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
VAL=tests/validation/small.lackey.zst
. tests/e2e_lib.sh

# --- bad values: exit 2, one line ---------------------------------------------------
expect_error "--skip-refs: expected a count (a non-negative integer), got '-5'" $MMUSIM run $VAL --skip-refs -5
check "$(wc -l <"$T/err")" 1 "a bad count is one line"
expect_error "--warmup-insns: expected a count (a non-negative integer), got '1e6'" $MMUSIM run $VAL --warmup-insns 1e6
expect_error "--sim-refs: expected a count (a non-negative integer), got ''" $MMUSIM run $VAL --sim-refs=
expect_error "--sim-refs: expected a count" $MMUSIM run $VAL --sim-refs 18446744073709551616
expect_error "--skip-refs and --skip-insns: give one, not both" $MMUSIM run $VAL --skip-refs 5 --skip-insns 5
check "$(wc -l <"$T/err")" 1 "both units is one line"
expect_error "--set: roi.warmup_insns: give roi.warmup_refs or roi.warmup_insns, not both" \
	$MMUSIM run $VAL --set roi.warmup_refs=1 --warmup-insns 2
expect_error "--set roi.sim_refs=-1: roi.sim_refs: expected a non-negative integer" \
	$MMUSIM run $VAL --set roi.sim_refs=-1

# --- --sim-refs: exactly N references, and run.roi says what was left out -----------
$MMUSIM run $VAL --skip-refs 1000 --warmup-refs 20000 --sim-refs 100000 --json "$T/s.json" --quiet ||
	bad "run --sim-refs"
refs=$(($(field "$T/s.json" refs ifetch) + $(field "$T/s.json" refs load) + $(field "$T/s.json" refs store) +
	$(field "$T/s.json" refs modify)))
check "$refs" 100000 "--sim-refs 100000: references counted"
check "$(field "$T/s.json" roi skipped_refs)" 1000 "run.roi.skipped_refs"
check "$(field "$T/s.json" roi warmup_refs_run)" 20000 "run.roi.warmup_refs_run"
check "$(field "$T/s.json" roi stopped)" true "run.roi.stopped"
check "$(field "$T/s.json" roi started)" true "run.roi.started"
$MMUSIM run $VAL --json "$T/plain.json" --quiet
grep -q '"roi"' "$T/plain.json" && bad "run.roi without a region" || ok
$MMUSIM run $VAL --sim-refs 100000 | grep -q '^  region of interest: skipped 0 refs (0 instructions), warm-up 0 refs (0 instructions) not counted; stopped at its end$' &&
	ok || bad "the text report's region line"

# --- --modes: each mode (the threaded pool) as its own run --------------------------
$MMUSIM run $VAL --modes base,thp --skip-insns 5000 --warmup-refs 200000 --sim-refs 300000 --json "$T/m.json" \
	--quiet || bad "--modes with a region"
for mode in base thp; do
	$MMUSIM run $VAL --set os.mode=$mode --skip-insns 5000 --warmup-refs 200000 --sim-refs 300000 \
		--json "$T/$mode.json" --quiet || bad "run $mode with a region"
	# the mode's object of the --modes report, reindented as a report of its own
	awk -v m="  \"$mode\": {" '$0 == m { on = 1; print "{"; next } on && /^  }/ { print "}"; exit } on { print substr($0, 3) }' \
		"$T/m.json" | strip | grep -v -e config_hash -e '"mode"' >"$T/mm.json"
	strip <"$T/$mode.json" | grep -v -e config_hash -e '"mode"' >"$T/one.json"
	diff "$T/mm.json" "$T/one.json" >/dev/null && ok || bad "--modes $mode differs from its own run"
done

# --- sweeps: set: and sweep: take roi.*, the CSV and the resume key follow ------------
mkdir -p "$T/sw"
cat >"$T/sw/s.yaml" <<EOF
trace: $(pwd)/$VAL
set: { roi.warmup_refs: 10000 }
sweep:
  roi.sim_refs: [1000, 50000]
EOF
$MMUSIM sweep "$T/sw/s.yaml" -j 1 -o "$T/sw/s.csv" --quiet || bad "sweep with roi keys"
$MMUSIM sweep "$T/sw/s.yaml" --list | grep -q -- '--set roi.warmup_refs=10000 .*--sweep-set roi.sim_refs=1000 ' &&
	ok || bad "sweep --list: the roi keys on each point's command"
# refs.ifetch + refs.load + refs.store + refs.modify of each row = its roi.sim_refs
got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ printf "%s=%d ", $c["roi.sim_refs"], $c["refs.ifetch"] + $c["refs.load"] + $c["refs.store"] + $c["refs.modify"] }' \
	"$T/sw/s.csv")
check "$got" "1000=1000 50000=50000 " "sweep rows count their roi.sim_refs"
# a region changed in the file: its points rerun (config_hash), the others are reused
sed 's/roi.sim_refs: \[1000, 50000\]/roi.sim_refs: [1000, 60000]/' "$T/sw/s.yaml" >"$T/sw/s2.yaml"
$MMUSIM sweep "$T/sw/s2.yaml" -o "$T/sw/s.csv" --outdir "$T/sw/s.csv.d" 2>"$T/sw/err" || bad "edited roi sweep"
grep -q 'sweep: 1 of 2 points reused from' "$T/sw/err" && ok || bad "roi sweep reused: $(head -1 "$T/sw/err")"

echo "  e2e_roi: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
