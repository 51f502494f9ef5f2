#!/bin/bash
# native_model.sh - keeps make native-model's comparison (tests/native/model_compare.sh)
# honest without measuring anything: on a fixed native CSV and a fixed sweep CSV (the
# sweep's quoted input columns with their commas included) it must write the exact
# rows and table below (ns = cycles per step / the clock from the clock row, the ratio,
# the chase/GUPS ratios, 25 % marks, the measured memory latency in cycles, the measured
# bandwidth in bytes a cycle and base CPI), replace no
# directory, refuse a native CSV without a clock row; and the experiment file
# configs/experiments/native-model.yaml must parse with its 14 points. And make
# native-thp's program (tests/native/thp_causes.c) must compile without a warning, write
# its CSV for a 4 MiB run (4K row first, no AnonHugePages under MADV_NOHUGEPAGE) and
# exit 2 on a bad argument; its numbers are this machine's, not checked. So must
# tests/native/stride_chase.c's (one line for a small chase, exit 2 on a bad spacing).
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
bw,268435456,4K,2.000,0.0000,5
triadl1,8192,4K,0.5000,0.0000,5
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
		'2.000 ns per 64-byte line = 32.00 GB/s = 10.00 bytes a cycle at that clock; configs/zen5.yaml cache.dram_bandwidth: ' \
		'0.5000 ns per element = 1.600 cycles / 7 instructions = 0.229; configs/zen5.yaml cpu.cpi: ' \
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

if ! command -v cc >/dev/null 2>&1; then
	echo "skip: no C compiler for thp_causes.c"
elif cc -std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-o "$T/thp_causes" tests/native/thp_causes.c 2>"$T/cc.err" && [ ! -s "$T/cc.err" ]; then
	ok "thp_causes.c compiles without a warning"
	if [ -r /proc/self/smaps ] && "$T/thp_causes" -r 1 4 >"$T/thp.csv" 2>"$T/thp.err"; then
		awk -F, 'NR == 1 { bad = $0 != "footprint,pages,run,touch_ns_per_4k,lap1_ns,lap2_ns,steady_ns,event_share,steady_wo_events_ns,anon_huge_share"; next }
			{ if (NF != 10 || $1 != 4194304 || $2 != (NR == 2 ? "4K" : "thp") || $3 != 1 || $4 <= 0 || $7 <= 0 || $8 < 0 || $8 > 1) bad = 1
			  if ($2 == "4K" && $10 != "0.0000") bad = 1 }
			END { exit bad || NR != 3 }' "$T/thp.csv" && ok "thp_causes -r 1 4 writes its CSV" ||
			bad "thp_causes CSV: $(head -3 "$T/thp.csv")"
	else
		bad "thp_causes -r 1 4: $(head -2 "$T/thp.err")"
	fi
	"$T/thp_causes" 5 >"$T/t5.out" 2>"$T/t5.err"
	rc=$?
	[ $rc = 2 ] && grep -q '^usage: thp_causes' "$T/t5.err" && [ ! -s "$T/t5.out" ] &&
		ok "thp_causes: an odd size exits 2 with the usage" || bad "thp_causes 5: exit $rc"
else
	bad "thp_causes.c: $(head -3 "$T/cc.err")"
fi

# tests/native/stride_chase.c (the README's walk-cost measurements): compiles without a
# warning, prints one line for a small chase, refuses a spacing that is not a multiple of 64
if command -v cc >/dev/null 2>&1; then
	if cc -std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
		-o "$T/stride_chase" tests/native/stride_chase.c 2>"$T/sc.err" && [ ! -s "$T/sc.err" ]; then
		"$T/stride_chase" 64 4160 0 >"$T/sc.out" 2>&1 &&
			grep -Eq '^64 elements, spacing 4160, thp 0: [0-9]+\.[0-9] ns/step' "$T/sc.out" &&
			ok "stride_chase 64 4160 0: $(cut -d'(' -f1 "$T/sc.out")" || bad "stride_chase: $(head -2 "$T/sc.out")"
		"$T/stride_chase" 64 100 0 >"$T/sc2.out" 2>&1
		rc=$?
		[ $rc = 2 ] && grep -q '^usage: stride_chase' "$T/sc2.out" &&
			ok "stride_chase: spacing 100 exits 2 with the usage" || bad "stride_chase 64 100 0: exit $rc"
	else
		bad "stride_chase.c: $(head -3 "$T/sc.err")"
	fi
fi

[ $fail = 0 ] && echo "native_model: all passed"
exit $fail
