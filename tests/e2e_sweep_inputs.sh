#!/bin/bash
# End-to-end tests of a sweep's inputs, checked before any point runs (issue 10):
# a YAML flow list split at a workload spec's commas, bad workload specs and trace
# paths in a sweep file or on its command line, and counts with K/M/G suffixes in
# workload specs. Run from the repository root by tests/run.sh (make check) with
# MMUSIM set to the binary under test. Each failed check prints "FAIL" and the
# script exits non-zero if any failed.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# no_points NAME: the sweep NAME.yaml (run from $T/sw) ran no point: no CSV, no
# NAME.csv.d/ (it is made only once every input has passed), no point report
no_points() {
	if [ -e "$T/sw/$1.csv" ] || [ -e "$T/sw/$1.csv.d" ] || ls "$T/sw" | grep -q '^point-'; then
		bad "$1.yaml: a point ran or its directory was made: $(ls "$T/sw" | tr '\n' ' ')"
	else
		ok
	fi
}

# The sweeps run in $T/sw, so that their default outputs (NAME.csv, NAME.csv.d/) land there.
ROOT=$(pwd)
VALID=$ROOT/tests/validation/small.lackey.zst
MM=$(cd "$(dirname "$MMUSIM")" && pwd)/$(basename "$MMUSIM")
mkdir -p "$T/sw" && cd "$T/sw" || exit 1

# --- (a) a flow list splits at every comma: the gups spec's updates= becomes an item --
cat >"$T/sw/flow.yaml" <<'EOS'
set: { os.memory: 2G }
workload: [stream:size=16M, gups:size=64M,updates=1000000]
sweep:
  tlb.l1d.4K.entries: [32, 64, 128]
  os.mode: [base, hugetlbfs, thp]
EOS
# the item `updates=1000000` starts at line 2, column 43
expect_error "flow.yaml:2:43: workload: 'updates=1000000' is not a workload spec; a flow list [...] splits at every comma, so quote a spec that holds commas: \"gups:size=64M,updates=1000000\"" \
	"$MM" sweep flow.yaml --quiet
[ -s "$T/out" ] && bad "flow.yaml: output on stdout: $(head -1 "$T/out")" || ok
no_points flow
# the same before --list and --shard
expect_error "flow.yaml:2:43: workload: 'updates=1000000'" "$MM" sweep flow.yaml --list
[ -s "$T/out" ] && bad "flow.yaml --list printed commands" || ok
expect_error "flow.yaml:2:43: " "$MM" sweep flow.yaml --shard 1/2 --quiet
no_points flow
# several bare items: the suggestion joins them all to the spec before
printf 'workload: [stream:size=1M, gups:size=1M,updates=4K,seed=3, chase:size=1M]\nsweep:\n  os.mode: [base]\n' >"$T/sw/flow2.yaml"
expect_error "flow2.yaml:1:41: workload: 'updates=4K' is not a workload spec; a flow list [...] splits at every comma, so quote a spec that holds commas: \"gups:size=1M,updates=4K,seed=3\"" \
	"$MM" sweep flow2.yaml --quiet
# in a block list no comma split it: only said to be no spec
printf 'workload:\n  - stream:size=1M\n  - updates=4K\nsweep:\n  os.mode: [base]\n' >"$T/sw/block.yaml"
expect_error "block.yaml:3:5: workload: 'updates=4K' is not a workload spec (NAME:key=value,...)" \
	"$MM" sweep block.yaml --quiet

# --- (b) quoted, the spec is one item: 2 inputs x 3 x 3 = 18 points --------------------
sed 's/gups:size=64M,updates=1000000/"gups:size=64M,updates=1000000"/' "$T/sw/flow.yaml" >"$T/sw/quoted.yaml"
"$MM" sweep quoted.yaml --list --outdir res >"$T/list" || bad "quoted.yaml --list"
check "$(wc -l <"$T/list")" 18 "quoted spec: points listed"
check "$(grep -c -- " -w gups:size=64M,updates=1000000 " "$T/list")" 9 "quoted spec: the gups points carry the whole spec"
# the shipped example (README's) is quoted the same way
"$MM" sweep "$ROOT/configs/sweeps/example.yaml" --list --outdir res >"$T/list" ||
	bad "configs/sweeps/example.yaml --list"
check "$(wc -l <"$T/list")" 18 "configs/sweeps/example.yaml: points listed"

# --- (c) a bad workload parameter, a missing trace: at their item, before any point ---
cat >"$T/sw/param.yaml" <<'EOS'
workload:
  - stream:size=1M,iterations=1
  - gups:size=64M,foo=1
sweep:
  os.mode: [base, thp]
EOS
expect_error "param.yaml:3:5: workload 'gups:size=64M,foo=1': gups: unknown parameter 'foo'" \
	"$MM" sweep param.yaml --quiet
no_points param
printf 'workload: [stream:size=1M, "gups:size=1M,updates=4Q"]\nsweep:\n  os.mode: [base]\n' >"$T/sw/count.yaml"
expect_error "count.yaml:1:28: workload 'gups:size=1M,updates=4Q': gups: bad updates '4Q'" \
	"$MM" sweep count.yaml --quiet
no_points count
# a scalar input: its own position
printf 'workload: zipf:size=4M,refs=10\nsweep:\n  os.mode: [base]\n' >"$T/sw/scalar.yaml"
expect_error "scalar.yaml:1:11: workload 'zipf:size=4M,refs=10': zipf: missing parameter 'alpha'" \
	"$MM" sweep scalar.yaml --quiet
no_points scalar
# traces: resolved against the sweep file's directory; missing, a directory, not a trace
printf 'trace: [%s, nope.lackey]\nsweep:\n  os.mode: [base, thp]\n' "$VALID" >"$T/sw/trace.yaml"
col=$((8 + ${#VALID} + 2 + 1)) # "trace: [" VALID ", " nope.lackey
expect_error "trace.yaml:1:$col: trace: nope.lackey: No such file or directory" "$MM" sweep trace.yaml --quiet
no_points trace
mkdir -p "$T/sw/sub" "$T/sw/adir"
printf 'trace:\n  - ../adir\nsweep:\n  os.mode: [base]\n' >"$T/sw/sub/dir.yaml"
expect_error "sub/dir.yaml:2:5: trace: sub/../adir: Is a directory" "$MM" sweep sub/dir.yaml --quiet
echo 'hello' >"$T/sw/junk.txt"
printf 'trace: junk.txt\nsweep:\n  os.mode: [base]\n' >"$T/sw/junk.yaml"
expect_error "junk.yaml:1:8: trace: junk.txt: cannot detect the trace format (use --format)" \
	"$MM" sweep junk.yaml --quiet
no_points junk
# the file's format: applies to the check as to the run
printf 'trace: %s\nformat: mtr\nsweep:\n  os.mode: [base]\n' "$VALID" >"$T/sw/fmt.yaml"
expect_error "fmt.yaml:1:8: trace: $VALID: " "$MM" sweep fmt.yaml --quiet
no_points fmt

# --- the command line's input, which replaces the file's: named as `mmusim run` does ---
expect_error "-w: gups: unknown parameter 'foo'" "$MM" sweep quoted.yaml -w gups:size=1M,foo=1 --quiet
no_points quoted
expect_error "missing.lackey: No such file or directory" "$MM" sweep quoted.yaml missing.lackey --quiet
no_points quoted
# ... and a good one replaces a bad file input, which is then not checked
"$MM" sweep param.yaml -w stream:size=64K,iterations=1 --list --outdir res >"$T/list" ||
	bad "a good -w over a file with a bad input"
check "$(wc -l <"$T/list")" 2 "-w over param.yaml: points"
# a pipe is checked only for access (it can be read once), and the sweep reads it whole
"$MM" sweep trace.yaml <(zstd -dc "$VALID") -o pipe.csv --quiet || bad "sweep of a pipe"
check "$(cut -d, -f5 "$T/sw/pipe.csv" | sed -n 2p)" 1351941 "sweep of a pipe: refs.load of the validation trace"

cd "$ROOT" || exit 1

# --- (d) counts take K/M/G/T suffixes, binary: updates=4K is 4096 updates ------------
# gups:size=1M: the table of 1M/8 = 131072 words written once in order (one store
# each), then one 8-byte read-modify-write (one modify record) per update, no loads;
# 4 instructions per init iteration and 12 per update (sim/workload.c).
$MMUSIM run -w gups:size=1M,updates=4K --json "$T/g.json" --quiet || bad "run -w gups:size=1M,updates=4K"
check "$(field "$T/g.json" refs modify)" 4096 "updates=4K: modify records"
check "$(field "$T/g.json" refs store)" 131072 "gups:size=1M: table stores"
check "$(field "$T/g.json" refs load)" 0 "gups: no loads"
check "$(field "$T/g.json" refs dtlb_lookups)" $((131072 + 2 * 4096)) "a modify is two dTLB lookups"
check "$(field "$T/g.json" refs instructions)" $((4 * 131072 + 12 * 4096)) "gups instructions"
$MMUSIM run -w gups:size=1M,updates=4096 --json "$T/g2.json" --quiet || bad "run -w gups:size=1M,updates=4096"
cmp -s <(grep -v -e wall_seconds -e refs_per_second -e max_rss_bytes -e '"trace"' -e input_id "$T/g.json") \
	<(grep -v -e wall_seconds -e refs_per_second -e max_rss_bytes -e '"trace"' -e input_id "$T/g2.json") &&
	ok || bad "updates=4K and updates=4096 differ"
# the same through a sweep's -w
(cd "$T/sw" && "$MM" sweep quoted.yaml -w gups:size=1M,updates=4K -o w.csv --quiet) || bad "sweep -w gups:size=1M,updates=4K"
col=$(head -1 "$T/sw/w.csv" | tr ',' '\n' | grep -nx refs.modify | cut -d: -f1)
check "$(cut -d, -f"${col:-1}" "$T/sw/w.csv" | sort -u | head -1)" 4096 "sweep -w updates=4K: refs.modify of every point"
$MMUSIM run -w stream:size=64K,iterations=1K --json "$T/s.json" --quiet || bad "run -w stream:...,iterations=1K"
check "$(field "$T/s.json" refs load)" $((2 * 8192 * 1024)) "iterations=1K: 1024 passes of two loads per element"

# --- (e) zero, signs and junk are errors ------------------------------------------------
expect_error "-w: gups: updates must not be 0" $MMUSIM run -w gups:size=1M,updates=0 --quiet
expect_error "-w: gups: bad updates '-1' (expected an unsigned integer with an optional K, M, G or T suffix)" \
	$MMUSIM run -w gups:size=1M,updates=-1 --quiet
expect_error "-w: gups: bad updates '4Q' (expected an unsigned integer with an optional K, M, G or T suffix)" \
	$MMUSIM run -w gups:size=1M,updates=4Q --quiet
expect_error "-w: gups: updates must not be 0" $MMUSIM run -w gups:size=1M,updates=0K --quiet
expect_error "-w: gups: bad updates '+4K'" $MMUSIM run -w gups:size=1M,updates=+4K --quiet
expect_error "-w: gups: bad updates '16777216T'" $MMUSIM run -w gups:size=1M,updates=16777216T --quiet

echo "  e2e_sweep_inputs: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
