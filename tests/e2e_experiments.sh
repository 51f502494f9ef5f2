#!/bin/bash
# e2e_experiments.sh - what the experiments of several processes read: each
# process's timeline rows (run --timeline under a processes: list: a process
# column, its own RSS and huge bytes), its fault-latency histogram in the JSON
# (processes[].fault_latency_cycles), a single trace's timeline unchanged, the
# kv workload's bloat (HawkEye's Redis pattern) and configs/experiments/kv-bloat.yaml
# loading and running small.
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

echo "  e2e_experiments: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
