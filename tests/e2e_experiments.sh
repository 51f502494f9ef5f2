#!/bin/bash
# e2e_experiments.sh - what the experiments of several processes read: each
# process's timeline rows (run --timeline under a processes: list: a process
# column, its own RSS and huge bytes), its fault-latency histogram in the JSON
# (processes[].fault_latency_cycles), a single trace's timeline unchanged, the
# kv workload's bloat (HawkEye's Redis pattern) and configs/experiments/kv-bloat.yaml
# loading and running small; a process that is a built-in workload (processes:
# [{workload: SPEC}]); configs/experiments/ingens-fairness.yaml and cbmm-latency.yaml
# small, with merge --latency's CDF rows; configs/experiments/mthp.yaml's knobs
# (os.thp_anon, the scalar tlb.coalesce) and its claims on a small sweep: walks,
# fault cycles and RSS per anonymous THP size, coalescing on and off, clean and
# every pageblock pinned.
MMUSIM=${MMUSIM:-./mmusim}
case $MMUSIM in /*) ;; *) MMUSIM=$(pwd)/$MMUSIM ;; esac
R=$(pwd)
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

cd "$T" || exit 1
"$MMUSIM" trace gen -w gups:size=4M,updates=20000 -o a.mtr >/dev/null || exit 1
"$MMUSIM" trace gen -w stream:size=1M,iterations=1 -o b.mtr >/dev/null || exit 1

# --- two processes: the histogram and the per-process timeline --------------------
"$MMUSIM" run a.mtr b.mtr --set os.mode=thp --json r.json --timeline tl.csv --timeline-ms 0.5 --quiet
check $? 0 "run A B --timeline"
# A: 2 THP faults (4 MiB, each zeroing 512 pages); B: 256 4 KiB faults and one THP fault
check "$(grep -A40 '"fault_latency_cycles"' r.json | tr -d ' \n' | grep -o '"fault_latency_cycles":\[[0-9,]*\]' | tr '\n' ' ')" \
	'"fault_latency_cycles":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2] "fault_latency_cycles":[0,0,0,0,0,0,0,0,256,0,0,0,0,0,0,0,0,1] ' \
	"each process's faults by log2 cycles"
check "$(head -1 tl.csv | cut -d, -f1-7)" "mode,process,time_ms,cycles,rss_bytes,huge_bytes,huge_coverage" \
	"a processes: list's timeline has a process column"
check "$(tail -n +2 tl.csv | cut -d, -f1-7,22 | tr '\n' ' ')" \
	"thp,0,0.500000,1400000,4194304,4194304,1.000000,2 thp,1,1.000000,2800000,2183168,2097152,0.960600,22 thp,1,1.500000,4200000,3145728,2097152,0.666667,235 " \
	"a row per live process: its RSS, huge bytes, coverage and its own pgfault"
# one trace: the header as before
"$MMUSIM" run a.mtr --timeline one.csv --quiet
check "$(head -1 one.csv | cut -d, -f1-6)" "mode,time_ms,cycles,rss_bytes,huge_bytes,huge_coverage" \
	"one trace's timeline: no process column"

# --- kv: the bloat THP keeps ---------------------------------------------------------
"$MMUSIM" run -w kv:size=8M,gap=100G --modes base,thp --json kv.json --quiet
check "$(field kv.json base rss_bytes) $(sed -n '/^  "thp"/,$p' kv.json | awk '$1 == "\"rss_bytes\":" { gsub(/,/, "", $2); print $2; exit }')" \
	"8388608 15097856" "kv: base ends at the dataset, thp 6.4 MiB over it (khugepaged refilled the holes)"
expect_error "-w: kv: value 1024 is not a multiple of 4096 (a value is whole pages)" \
	"$MMUSIM" run -w kv:size=64K,value=1K --quiet

# --- the experiment's config loads, and a small version of it runs -----------------
"$MMUSIM" sweep "$R/configs/experiments/kv-bloat.yaml" --list -o kv.csv >list.txt
check "$?,$(wc -l <list.txt | tr -d ' ')" "0,2" "kv-bloat.yaml: two points (base, thp)"
sed 's/kv:size=64M,gap=200G,tail=30G/kv:size=8M,gap=100G/' "$R/configs/experiments/kv-bloat.yaml" >small.yaml
"$MMUSIM" sweep small.yaml -o small.csv --quiet
c=$(head -1 small.csv | tr , '\n' | grep -nx 'memory.rss_bytes' | cut -d: -f1)
check "$(tail -n +2 small.csv | cut -d, -f2,"$c" | tr '\n' ' ')" "base,8388608 thp,15097856 " \
	"kv-bloat.yaml scaled down: RSS per mode"

# --- a process can be a built-in workload -------------------------------------------
cat >wl.yaml <<'EOF'
os: { mode: thp }
processes:
  - { workload: "gups:size=4M,updates=20000" }
  - { workload: "stream:size=1M,iterations=1", start: 1000 }
EOF
check "$("$MMUSIM" config show -c wl.yaml | grep -A2 '^processes:' | tr '\n' '|')" \
	'processes:|  - { workload: "gups:size=4M,updates=20000", start: 0, repeat: 1, thp_disable: false }|  - { workload: "stream:size=1M,iterations=1", start: 1000, repeat: 1, thp_disable: false }|' \
	"config show writes a workload process as workload:"
"$MMUSIM" run -c wl.yaml --json wl.json --quiet
check $? 0 "run -c: two workload processes"
# the same two processes as the traces a.mtr and b.mtr above: the same faults
check "$(grep -A40 '"fault_latency_cycles"' wl.json | tr -d ' \n' | grep -o '"fault_latency_cycles":\[[0-9,]*\]' | tr '\n' ' ')" \
	'"fault_latency_cycles":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2] "fault_latency_cycles":[0,0,0,0,0,0,0,0,256,0,0,0,0,0,0,0,0,1] ' \
	"workload processes: each one's faults, as the traces'"
id1=$(grep '"input_id"' wl.json)
"$MMUSIM" run -c wl.yaml --json wl2.json --quiet
"$MMUSIM" run -c wl.yaml --set seed=7 --json wl7.json --quiet
check "$(grep -c processes:2: wl.json) $([ "$id1" = "$(grep '"input_id"' wl2.json)" ] && echo same) $([ "$id1" != "$(grep '"input_id"' wl7.json)" ] && echo differs)" \
	"1 same differs" "the input id covers the workload specs and the seed"
printf 'processes:\n  - { workload: "gups:size=1M", trace: a.mtr }\n' >both.yaml
expect_error "both.yaml:2:33: processes[0]: both trace and workload (a process runs one of them)" \
	"$MMUSIM" run -c both.yaml --quiet
printf 'processes:\n  - a.mtr\n  - { workload: "gups:size=1M,foo=2" }\n' >badwl.yaml
expect_error "badwl.yaml:3:17: processes[1].workload: gups: unknown parameter 'foo'" \
	"$MMUSIM" run -c badwl.yaml --quiet
printf 'processes:\n  - { start: 5 }\n' >none.yaml
expect_error "none.yaml:2:5: processes[0]: no trace or workload" "$MMUSIM" run -c none.yaml --quiet
cat >mix.yaml <<'EOF'
set: { os.mode: thp }
sweep:
  processes:
    - [a.mtr, {workload: "stream:size=1M,iterations=1", start: 1000}]
EOF
"$MMUSIM" sweep mix.yaml -o mix.csv --quiet
check "$?,$(tail -n +2 mix.csv | cut -d, -f2-3)" '0,"a.mtr + stream:size=1M,iterations=1(start=1000)"' \
	"a sweep's mix: a trace and a workload"

# --- ingens-fairness.yaml small: the first process keeps its huge pages, the second does not
sed 's/os.memory: 512M/os.memory: 64M/; s/size=64M,updates=8M/size=8M,updates=1M/g; s/start: 50000000/start: 5000000/' \
	"$R/configs/experiments/ingens-fairness.yaml" >ingens.yaml
"$MMUSIM" sweep "$R/configs/experiments/ingens-fairness.yaml" --list -o i.csv >list.txt
check "$?,$(wc -l <list.txt | tr -d ' ')" "0,2" "ingens-fairness.yaml: two points (unfragmented, fragmented)"
# the figure's run: the sweep's last point with a timeline for its report (Makefile)
"$MMUSIM" sweep ingens.yaml -o ingens.csv --list | tail -n 1 |
	sed "s|^mmusim |\"\$MMUSIM\" |; s| --json [^ ]*\$| --timeline itl.csv --timeline-ms 1|" >ingens.sh
MMUSIM=$MMUSIM sh ingens.sh
check $? 0 "ingens-fairness small: the fragmented point's timeline"
# the last row of each process: 8 MiB resident, 8 MiB huge for the first, 4 MiB for the second
check "$(awk -F, 'NR > 1 { last[$2] = $5 "," $6 "," $7 } END { print last[0] " " last[1] }' itl.csv)" \
	"8388608,8388608,1.000000 8388608,4194304,0.500000" \
	"ingens-fairness small: the first process ends with more huge coverage than the second"
"$MMUSIM" sweep ingens.yaml -o ingens.csv --quiet
check "$(sed -n '/^  "processes": \[/,$p' ingens.csv.d/point-000001-*.json | tr -d ' \n' | grep -o '"thp_fault_alloc":[0-9]*,"thp_fault_fallback":[0-9]*' | tr '\n' ' ')" \
	'"thp_fault_alloc":4,"thp_fault_fallback":0 "thp_fault_alloc":2,"thp_fault_fallback":2 ' \
	"ingens-fairness small, fragmented: each process's THP faults (4 of 4, 2 of 4)"

# --- cbmm-latency.yaml small, and merge --latency --------------------------------------
"$MMUSIM" sweep "$R/configs/experiments/cbmm-latency.yaml" --list -o c.csv >list.txt
check "$?,$(wc -l <list.txt | tr -d ' ')" "0,10" "cbmm-latency.yaml: ten points, 0 to 90 %"
sed 's/os.memory: 256M/os.memory: 64M/; s/size=64M,updates=1M/size=16M,updates=10000/g; s/start: 20000000/start: 5000000/; s/unmovable: \[.*\]/unmovable: [0.0, 0.9]/' \
	"$R/configs/experiments/cbmm-latency.yaml" >cbmm.yaml
"$MMUSIM" sweep cbmm.yaml -o cbmm.csv --quiet
"$MMUSIM" merge --latency lat.csv cbmm.csv.d/point-*.json
check $? 0 "merge --latency"
check "$(head -1 lat.csv)" "point,os.fragmentation.unmovable,processes,mode,process,log2_cycles,cycles_lo,cycles_hi,faults,cdf,ccdf" \
	"merge --latency: the labels, then the CDF columns"
check "$(wc -l <lat.csv | tr -d ' ')" "74" "a row per bucket up to the last non-empty one: 18 + 18 + 18 + 19 rows and the header"
# unfragmented: every fault a THP's (2^17 cycles); at 90 % a body of 4 KiB faults and the second
# process's slowest fault (a direct compaction) above the first's
check "$(sed 's/"[^"]*"/MIX/' lat.csv | awk -F, 'NR > 1 && $(NF-2) > 0' | cut -d, -f1,2,5- | tr '\n' ' ')" \
	"0,0.0,0,17,131072,262144,8,1.000000,1 0,0.0,1,17,131072,262144,8,1.000000,1 1,0.9,0,8,256,512,2557,0.997659,1 1,0.9,0,17,131072,262144,6,1.000000,0.00234101 1,0.9,1,8,256,512,4094,0.999512,1 1,0.9,1,17,131072,262144,1,0.999756,0.000488281 1,0.9,1,18,262144,524288,1,1.000000,0.000244141 " \
	"cbmm-latency small: each process's non-empty buckets and its CDF"
check "$(sed -n 2p lat.csv | sed 's/"[^"]*"/MIX/' | cut -d, -f3-)" "MIX,thp,0,0,0,2,0,0.000000,1" "bucket 0: 0 and 1 cycles, CDF 0 below the first fault"
"$MMUSIM" merge --latency onelat.csv r.json
check "$?,$(head -1 onelat.csv),$(wc -l <onelat.csv | tr -d ' ')" "0,mode,process,log2_cycles,cycles_lo,cycles_hi,faults,cdf,ccdf,37" \
	"merge --latency of one run's report: no labels; 18 + 18 rows"
expect_error "mix.csv:1:5: '[' or '{' expected" "$MMUSIM" merge --latency out.csv mix.csv
expect_error "kv.json: no processes array" "$MMUSIM" merge --latency out2.csv kv.json
check "$([ -e out.csv ] || [ -e out2.csv ] || echo none)" "none" "merge --latency: bad input writes no OUT"
expect_error "merge: --latency and --reps" "$MMUSIM" merge --latency --reps out.csv r.json

# --- mthp.yaml: anonymous THP sizes against a coalescing TLB ------------------------------
# the knobs its axes use: os.thp_anon (thp_anon=) and the scalar tlb.coalesce
check "$("$MMUSIM" config show --set os.thp_anon='16K-64K:always;128K,512K:inherit;256K:madvise;1M-2M:never' | grep 'sizes:')" \
	"    sizes: { 16K: { enabled: always }, 32K: { enabled: always }, 64K: { enabled: always }, 128K: { enabled: inherit }, 256K: { enabled: madvise }, 512K: { enabled: inherit }, 2M: { enabled: never } }" \
	"os.thp_anon: the kernel documentation's example, sizes not named never (2M too)"
check "$("$MMUSIM" config show --set os.thp.sizes.32K.enabled=always --set os.thp_anon=64K:always | grep 'sizes:')" \
	"    sizes: { 64K: { enabled: always }, 2M: { enabled: never } }" "os.thp_anon replaces every size's setting"
check "$("$MMUSIM" config show --set os.thp_anon=64K:always --set os.thp.sizes.2M.enabled=inherit | grep 'sizes:')" \
	"    sizes: { 64K: { enabled: always } }" "a per-size key after os.thp_anon overrides it"
expect_error "--set os.thp_anon=8K:always: os.thp_anon: bad size in '8K' (anonymous THP sizes are 16K, 32K, 64K, 128K, 256K, 512K, 1M and 2M)" \
	"$MMUSIM" config show --set os.thp_anon=8K:always
expect_error "--set os.thp_anon=64K: os.thp_anon: '64K' has no ':POLICY'" "$MMUSIM" config show --set os.thp_anon=64K
expect_error "--set os.thp_anon=2M-16K:always: os.thp_anon: range '2M-16K' runs downwards" \
	"$MMUSIM" config show --set os.thp_anon=2M-16K:always
expect_error "--set os.thp_anon=32K,:always: os.thp_anon: bad size in ''" "$MMUSIM" config show --set os.thp_anon=32K,:always
printf 'os:\n  mode: thp\n  thp_anon: "64K:sometimes"\n' >anon.yaml
expect_error "anon.yaml:3:3: os.thp_anon: unknown policy 'sometimes' (expected always, inherit, madvise or never)" \
	"$MMUSIM" config show -c anon.yaml
check "$("$MMUSIM" config show -c "$R/configs/zen4.yaml" --set tlb.coalesce=none | grep -c coalesce),$("$MMUSIM" config show -c "$R/configs/zen4.yaml" --set tlb.coalesce=contpte | grep coalesce)" \
	"0,  coalesce: { kind: contpte, l1d: true, stlb: true }" "tlb.coalesce: none turns every array off, a kind keeps the arrays"
expect_error "--set tlb.coalesce=off: tlb.coalesce: unknown value 'off' (expected none, amd or contpte, or a mapping of kind, l1i, l1d and stlb)" \
	"$MMUSIM" config show --set tlb.coalesce=off
printf 'tlb:\n  coalesce: "none\\0x"\n' >nul.yaml
expect_error "nul.yaml:2:3: tlb.coalesce: value contains a NUL byte" "$MMUSIM" config show -c nul.yaml

"$MMUSIM" sweep "$R/configs/experiments/mthp.yaml" --list -o m.csv >list.txt
check "$?,$(wc -l <list.txt | tr -d ' ')" "0,160" "mthp.yaml: 4 inputs x clean/fragmented x coalescing on/off x 10 size settings"
# small: STREAM 3 x 20 MiB (60 MiB, past the coalesced STLB's 48 MiB), GUPS over 16 MiB (4,096
# pages, 1,024 runs of 16 KiB: past the 3,072-entry STLB, within it coalesced), five settings
sed -e "s|^config: \.\./zen4.yaml|config: $R/configs/zen4.yaml|; s/os.memory: 1G/os.memory: 256M/" \
	-e 's/stream:size=32M,iterations=2/stream:size=20M,iterations=1/; s/gups:size=32M,updates=1M/gups:size=16M,updates=100K/' \
	-e '/traces\//d' -e 's/^  os.thp_anon: .*/  os.thp_anon: ["16K-2M:never", "16K:always", "1M:always", "2M:always", "16K-2M:always"]/' \
	"$R/configs/experiments/mthp.yaml" >mthp.yaml
"$MMUSIM" sweep mthp.yaml -o mthp.csv --quiet
check $? 0 "mthp.yaml small"
# one line per point: input frag coalesce sizes walks fault_cycles rss
# (the input column is quoted, its spec holding commas: the workload's name alone)
sed -E 's/^([0-9]+),"([a-z]+):[^"]*"/\1,\2/' mthp.csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ print $(c["input"]), $(c["os.fragmentation.unmovable"]), $(c["tlb.coalesce"]),
	  $(c["os.thp_anon"]), $(c["walk.walks"]), $(c["cycles.fault"]), $(c["memory.rss_bytes"]) }' >m.txt
# the walks of each setting: 4K only, 16K, 1M, 2M, all, per workload, machine and coalescing
check "$(awk '{ printf "%s%s", $5, (NR % 5 ? " " : "|") }' m.txt)" \
	"30720 7680 7680 30 30|30720 30720 30720 30 30|30720 7680 7680 30720 7680|30720 30720 30720 30720 30720|4449 1024 1024 8 8|29402 29402 29402 8 8|5074 1024 1024 5074 1024|29402 29402 29402 29402 29402|" \
	"mthp small: walks per size (stream, gups; clean amd, clean none, pinned amd, pinned none)"
w() { awk -v i="$1" -v f="$2" -v co="$3" -v s="$4" -v k="$5" '$1 == i && $2 == f && $3 == co && $4 == s { print $k }' m.txt; }
# without coalescing an mTHP below 2M is one TLB entry per 4 KiB page: the walks of 4 KiB pages
check "$(w stream 0.0 none 16K:always 5) $(w stream 0.0 none 1M:always 5) $(w gups 0.0 none 16K:always 5) $(w gups 0.0 none 1M:always 5)" \
	"$(w stream 0.0 none 16K-2M:never 5) $(w stream 0.0 none 16K-2M:never 5) $(w gups 0.0 none 16K-2M:never 5) $(w gups 0.0 none 16K-2M:never 5)" \
	"no coalescing: 16K and 1M mTHP walk as often as 4 KiB pages"
# with coalescing any size from 16K: a quarter of STREAM's walks, one per 16 KiB run of GUPS's table
check "$(( $(w stream 0.0 amd 16K:always 5) * 4 )) $(w stream 0.0 amd 1M:always 5) $(w gups 0.0 amd 16K:always 5) $(w gups 1.0 amd 16K:always 5)" \
	"$(w stream 0.0 amd 16K-2M:never 5) $(w stream 0.0 amd 16K:always 5) 1024 1024" \
	"coalescing: 16K mTHP quarters STREAM's walks, 1M adds nothing, GUPS one walk per run, pinned or not"
# 4 KiB pages coalesce only where the buddy allocator handed out consecutive frames
check "$(w stream 0.0 amd 16K-2M:never 5) $([ "$(w gups 0.0 amd 16K-2M:never 5)" -lt "$(w gups 1.0 amd 16K-2M:never 5)" ] &&
	[ "$(w gups 1.0 amd 16K-2M:never 5)" -lt "$(w gups 1.0 none 16K-2M:never 5)" ] && echo ordered)" \
	"$(w stream 0.0 none 16K-2M:never 5) ordered" \
	"4 KiB pages: STREAM's arrays faulted in turn get no runs; GUPS's get fewer on the pinned machine"
# every pageblock pinned: 2M alone is 4 KiB pages, all sizes fall back to 1M
check "$(w stream 1.0 amd 2M:always 5),$(w stream 1.0 amd 2M:always 6) $(w gups 1.0 amd 16K-2M:always 5),$(w gups 1.0 amd 16K-2M:always 6)" \
	"$(w stream 1.0 amd 16K-2M:never 5),$(w stream 1.0 amd 16K-2M:never 6) $(w gups 1.0 amd 1M:always 5),$(w gups 1.0 amd 1M:always 6)" \
	"pinned pageblocks: 2M alone gives 4 KiB pages' walks and fault cycles, all sizes 1M's"
# fault cycles: one fault per folio, falling with its size; the arrays fill every folio: no bloat
check "$(w stream 0.0 amd 16K-2M:never 6) $(w stream 0.0 amd 16K:always 6) $(w stream 0.0 amd 1M:always 6) $(w stream 0.0 amd 2M:always 6) $(w gups 0.0 amd 16K-2M:never 6) $(w gups 0.0 amd 16K:always 6) $(w gups 0.0 amd 1M:always 6) $(w gups 0.0 amd 2M:always 6)" \
	"7004160 4700160 3944160 3938160 1867776 1253376 1051776 1050176" "mthp small: fault cycles fall with the folio size"
check "$(awk '{ print $1, $7 }' m.txt | sort -u | tr '\n' ' ')" "gups 16777216 stream 62914560 " \
	"STREAM and GUPS: the same RSS at every size"
# the real captures (clean, coalescing): RSS grows with the folio size, walks fall little below 2M
sed -e "s|^config: \.\./zen4.yaml|config: $R/configs/zen4.yaml|; s|\.\./\.\./traces/|$R/traces/|" \
	-e '/"stream:\|"gups:/d; s/^  os.fragmentation.unmovable: .*//; s/^  tlb.coalesce: .*//' \
	-e 's/^  os.thp_anon: .*/  os.thp_anon: ["16K-2M:never", "16K:always", "64K:always", "1M:always", "2M:always"]/' \
	"$R/configs/experiments/mthp.yaml" >mthp-traces.yaml
"$MMUSIM" sweep mthp-traces.yaml -o mt.csv --quiet
check "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ n = split($(c["input"]), p, "/"); print p[n], $(c["os.thp_anon"]), $(c["memory.rss_bytes"]), $(c["walk.walks"]) }' mt.csv | tr '\n' '|')" \
	"sqlite3.mtr.zst 16K-2M:never 536576 574|sqlite3.mtr.zst 16K:always 700416 477|sqlite3.mtr.zst 64K:always 978944 499|sqlite3.mtr.zst 1M:always 3534848 522|sqlite3.mtr.zst 2M:always 6680576 627|xz-6.lackey.zst 16K-2M:never 4370432 2285|xz-6.lackey.zst 16K:always 4526080 2245|xz-6.lackey.zst 64K:always 4808704 2231|xz-6.lackey.zst 1M:always 8294400 2204|xz-6.lackey.zst 2M:always 23523328 702|" \
	"mthp captures: RSS and walks per size (sqlite3 12.5 times its 4 KiB RSS under 2M)"

echo "  e2e_experiments: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
