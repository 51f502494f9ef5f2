#!/bin/bash
# e2e_roi.sh - the region of interest on the command line (run --skip-refs,
# --warmup-refs, --sim-refs and the -insns forms; sim/roi.c): bad values are one
# line and exit 2; --sim-refs counts exactly N references and says so in run.roi;
# --modes (the threaded pool) gives each mode what its own run gives; a sweep
# takes the roi.* keys in set: and sweep:, and a resumed sweep reruns a point
# whose region changed; a region keeps the memory it starts from: --skip-refs over
# a set-up that writes 64 MiB, and a `capture --roi` of tests/capture/roi.c (which
# writes 64 MiB or builds a 64 MiB linked structure before its region; skipped
# without valgrind or mmusim's tool), replay with every page resident and its own
# frame at the region's start. Run from the repository root by tests/run.sh (make check)
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

# --- the skipped stretch keeps the memory it starts from ------------------------------
# chase:size=64M writes its 1 Mi nodes (its first 1048576 references), then walks them:
# every walk load finds its own frame (DRAM, 200 cycles: cache.latency.dram), not the zero
# page (4 cycles a load before), with no fault; the TLB's counts are those without it
for mode in base thp; do
	$MMUSIM run -w chase:size=64M --skip-refs 1048576 --set os.mode=$mode --set cache.data_refs=true \
		--json "$T/k.json" --quiet || bad "run --skip-refs over the set-up ($mode)"
	check "$(field "$T/k.json" memory rss_bytes)" 67108864 "$mode: RSS at the region's end"
	check "$(field "$T/k.json" vmstat pgfault)" 0 "$mode: faults in the region"
	check "$(field "$T/k.json" cycles data)" 209715200 "$mode: data cycles of 1 Mi walk loads"
	check "$(field "$T/k.json" l1d misses)" "$([ $mode = base ] && echo 1044510 || echo 32)" "$mode: L1 dTLB misses"
done
check "$(field "$T/k.json" memory huge_bytes)" 67108864 "thp: the set-up's THPs"

# --- a --roi capture keeps the memory its region starts from ---------------------------
if ! command -v valgrind >/dev/null 2>&1; then
	echo "    (no valgrind: the --roi capture is not checked)"
elif ! cc -O1 -Iinclude -o "$T/roi" tests/capture/roi.c; then
	bad "cannot compile tests/capture/roi.c"
elif ! $MMUSIM capture --roi -o "$T/a4k.mtr" -- "$T/roi" array 4k >"$T/cap.out" 2>&1 ||
	! $MMUSIM trace info "$T/a4k.mtr" | grep -q mmusim-amd64-linux; then
	echo "    (mmusim's Valgrind tool is not built: the --roi capture is not checked)"
else
	$MMUSIM trace info "$T/a4k.mtr" >"$T/info"
	w=$(sed -n 's/^touched: .*, \([0-9]*\) written,.*/\1/p' "$T/info")
	[ "${w:-0}" -ge 16384 ] && ok || bad "trace info: the set-up's 16384 written pages: $(grep touched "$T/info")"
	$MMUSIM run "$T/a4k.mtr" --set os.mode=base --json "$T/a4k.json" --quiet || bad "replay the 4k capture"
	check "$(field "$T/a4k.json" refs load)" 16384 "4k: the region's loads"
	check "$(field "$T/a4k.json" vmstat pgfault)" 0 "4k: the region faults nothing in"
	rss=$(field "$T/a4k.json" memory rss_bytes)
	[ "$rss" -ge 67108864 ] && ok || bad "4k: RSS $rss at the region's end, under the 64 MiB written"
	anon=$(field "$T/a4k.json" vmstat nr_anon_pages)
	[ "$anon" -ge 16384 ] && ok || bad "4k: $anon anonymous frames, under the 16384 pages written"
	$MMUSIM capture --roi -o "$T/thp.mtr" -- "$T/roi" array thp >"$T/cap.out" 2>&1 || bad "capture array thp"
	$MMUSIM run "$T/thp.mtr" --set os.mode=thp --set os.layout=trace --json "$T/thp.json" --quiet ||
		bad "replay the thp capture"
	check "$(field "$T/thp.json" vmstat pgfault)" 0 "thp: the region faults nothing in"
	check "$(field "$T/thp.json" vmstat nr_anon_transparent_hugepages)" 32 "thp: the set-up's THPs"
	# the linked structure built before the region, walked inside it: DRAM, not one frame
	$MMUSIM capture --roi -o "$T/chase.mtr" -- "$T/roi" chase >"$T/cap.out" 2>&1 || bad "capture chase"
	$MMUSIM run "$T/chase.mtr" --set os.mode=base --set cache.data_refs=true --json "$T/ch.json" --quiet ||
		bad "replay the chase capture"
	loads=$(field "$T/ch.json" refs load)
	per=$(($(field "$T/ch.json" cycles data) / loads))
	[ "$loads" -ge 1048576 ] && [ "$per" -ge 190 ] && ok ||
		bad "chase: $loads loads at $per data cycles each (want >= 1048576 at >= 190: DRAM)"
	check "$(field "$T/ch.json" vmstat pgfault)" 0 "chase: the region faults nothing in"
fi

echo "  e2e_roi: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
