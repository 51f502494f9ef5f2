#!/bin/bash
# native_model.sh - keeps make native-model's comparison (tests/native/model_compare.sh)
# honest without measuring anything: on a fixed native CSV and a fixed sweep CSV (the
# sweep's quoted input columns with their commas included) it must write the exact
# rows and table below (ns = cycles per step / the clock from the clock row, the ratio,
# the chase/GUPS ratios, 25 % marks, the measured memory latency in cycles), replace no
# directory, refuse a native CSV without a clock row; and the experiment file
# configs/experiments/native-model.yaml must parse with its 14 points.
set -u
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

cat >"$T/native.csv" <<'CSV'
workload,footprint,pages,ns_per_step,anon_huge_share,runs
clock,16384,4K,1.250,0.0000,5
memlat,12582912,4K,150.00,0.0000,5
chase,67108864,4K,100.00,0.0000,5
gups,67108864,4K,10.00,0.0000,5
stream,67108864,4K,0.50,0.0000,5
CSV
# cycles.total / steps: chase 16000 loads, 480000 cycles = 30 cycles (9.375 ns at 3.2 GHz);
# gups 1000 modifies, 40000 cycles = 40 (12.5 ns); stream 2000 loads = 1000 elements, 2000 cycles
cat >"$T/sim.csv" <<'CSV'
point,input,os.mode,refs.load,refs.modify,cycles.total,run.input_id
0,"chase:size=64M,stride=4K",base,16000,0,480000,"workload:chase:size=64M,stride=4K"
1,"gups:size=64M,updates=2M",base,0,1000,40000,"workload:gups:size=64M,updates=2M"
2,"stream:size=64M,iterations=2",base,2000,0,2000,"workload:stream:size=64M,iterations=2"
CSV
if NATIVE_CSV=$T/native.csv SIM_CSV=$T/sim.csv sh tests/native/model_compare.sh /nonexistent "$MMUSIM" "$T/out" >"$T/stdout" 2>"$T/err"; then
	cat >"$T/want.csv" <<'CSV'
workload,footprint,pages,native_ns,model_cycles,model_ns,model_over_native,clock_ghz
chase,67108864,4K,100.00,30.00,9.38,0.094,3.200
gups,67108864,4K,10.00,40.00,12.50,1.250,3.200
stream,67108864,4K,0.50,2.00,0.62,1.250,3.200
CSV
	cmp -s "$T/want.csv" "$T/out/native-model.csv" && ok "native-model.csv has the exact rows" ||
		bad "native-model.csv: $(diff "$T/want.csv" "$T/out/native-model.csv" | head -5)"
	for want in '| chase 64 MiB | 4K | 100.00 | 9.38 | 0.09 (outside 25 %) |' \
		'| gups 64 MiB | 4K | 10.00 | 12.50 | 1.25 |' \
		'| chase / GUPS 64 MiB | 4K | 10.00 | 0.75 | 0.07 (outside 25 %) |' \
		'150.00 ns = 480 cycles at that clock; configs/zen5.yaml cache.dram_latency: ' \
		'clock: 3.200 GHz (4 cycles of L1D load-to-use / 1.250 ns'; do
		grep -qF -- "$want" "$T/out/native-model.md" || bad "native-model.md has no '$want'"
	done
	cmp -s "$T/stdout" "$T/out/native-model.md" && ok "the table is printed and kept" || bad "stdout is not native-model.md"
	[ ! -e "$T/out/native-model.txt" ] && ok "NATIVE_CSV leaves the machine record alone" ||
		bad "native-model.txt written without a measurement"
else
	bad "model_compare.sh exited $?: $(head -2 "$T/err")"
fi

grep -v '^clock,' "$T/native.csv" >"$T/noclock.csv"
NATIVE_CSV=$T/noclock.csv SIM_CSV=$T/sim.csv sh tests/native/model_compare.sh /nonexistent "$MMUSIM" "$T/nc" >/dev/null 2>"$T/nc.err"
rc=$?
[ $rc = 1 ] && grep -q 'no clock row' "$T/nc.err" && [ ! -e "$T/nc/native-model.csv" ] &&
	ok "no clock row: exit 1, nothing written" || bad "no clock row: exit $rc, $(head -1 "$T/nc.err")"

mkdir -p "$T/dir/native-model.csv"
NATIVE_CSV=$T/native.csv SIM_CSV=$T/sim.csv sh tests/native/model_compare.sh /nonexistent "$MMUSIM" "$T/dir" >/dev/null 2>"$T/d.err"
rc=$?
[ $rc = 2 ] && [ -d "$T/dir/native-model.csv" ] && grep -q 'is not a regular file' "$T/d.err" &&
	ok "replaces no directory (exit 2)" || bad "directory output: exit $rc, $(head -1 "$T/d.err")"

n=$($MMUSIM sweep configs/experiments/native-model.yaml --list 2>"$T/l.err" | grep -c 'os.mode=')
[ "$n" = 14 ] && ok "native-model.yaml: 14 points" || bad "native-model.yaml --list: $n points, $(head -2 "$T/l.err")"

[ $fail = 0 ] && echo "native_model: all passed"
exit $fail
