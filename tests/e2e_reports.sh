#!/bin/bash
# e2e_reports.sh - reports that do not mislead, on the command line: memory's
# peaks and time-weighted huge coverage beside its end state (a program that
# frees its memory is not 0 %), the timeline's TLB misses per interval, one name
# per counter (the kernel's /proc/vmstat names in the text table, --modes,
# --vmas and the timeline, as in the JSON), 1 GiB pages on a machine without 1G
# TLB entries cached as 2 MiB fractures, and the warnings of an empty input and
# of a warm-up longer than the input (exit 0, the report written). Run from the
# repository root by tests/run.sh (make check) with MMUSIM set to the binary.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# tests/data/peak.lackey: 8 KiB written (2 pages), 10 instructions, 2 MiB written (one
# THP), 30 instructions, the 2 MiB unmapped, 10 instructions, the 8 KiB unmapped, 50
# instructions. With every latency and kernel cost 0 and CPI 1, simulated time is the
# instruction count, so by hand: RSS 8 KiB over [0, 10), 8 KiB + 2 MiB over [10, 40),
# 8 KiB over [40, 50), 0 after; huge bytes 2 MiB over [10, 40).
PEAK=tests/data/peak.lackey
FREE="--set os.mode=thp --set tlb.latency.l1=0 --set tlb.latency.stlb=0 --set cache.l1d.latency=0
      --set cache.l2.latency=0 --set cache.llc.latency=0 --set cache.dram_latency=0
      --set os.cost.fault=0 --set os.cost.clear_page=0 --set os.cost.flush=0"

# --- memory: the end state, the peaks, the time-weighted coverage ---------------------
# shellcheck disable=SC2086
$MMUSIM run $PEAK $FREE --json "$T/p.json" >"$T/p.txt" 2>"$T/p.err" || bad "run $PEAK"
check "$(field "$T/p.json" cycles total)" 100 "simulated time: the 100 instructions"
check "$(field "$T/p.json" memory rss_bytes)" 0 "memory.rss_bytes: all freed at the end"
check "$(field "$T/p.json" memory huge_coverage)" 0.0 "memory.huge_coverage at the end"
check "$(field "$T/p.json" memory peak_rss_bytes)" 2105344 "memory.peak_rss_bytes: 8 KiB + 2 MiB"
check "$(field "$T/p.json" memory peak_huge_bytes)" 2097152 "memory.peak_huge_bytes: the THP"
# 2 MiB / (2 MiB + 8 KiB) = 256/257
check "$(field "$T/p.json" memory huge_coverage_peak)" 0.9961089494 "memory.huge_coverage_peak"
# 2 MiB x 30 / (8 KiB x 50 + 2 MiB x 30) = 62914560 / 63324160
check "$(field "$T/p.json" memory huge_coverage_mean)" 0.9935316947 "memory.huge_coverage_mean"
check "$(grep '^  memory:' "$T/p.txt")" \
	"  memory: rss 0 KiB, huge 0 KiB (0.0% coverage) at the end; peak rss 2056 KiB, peak huge 2048 KiB (99.6% peak, 99.4% time-weighted coverage)" \
	"the text report's memory line"
check "$(cat "$T/p.err")" "" "nothing on stderr for a good input"
# the keys in order, after the end state
check "$(sed -n '/"memory": {/,/}/p' "$T/p.json" | sed -n 's/^ *"\([a-z_0-9]*\)".*/\1/p' | paste -sd,)" \
	"memory,rss_bytes,huge_bytes,huge_coverage,peak_rss_bytes,peak_huge_bytes,huge_coverage_peak,huge_coverage_mean,free_pages,fragmentation_index_order9,swap_bytes" \
	"memory's keys"
# after a warm-up of 12 references (2 stores, 10 fetches) the stretch starts at time 10
# with 8 KiB resident: 2 MiB x 30 / ((2 MiB + 8 KiB) x 30 + 8 KiB x 10) = 62914560 / 63242240
# shellcheck disable=SC2086
$MMUSIM run $PEAK $FREE --warmup-refs 12 --json "$T/w.json" -q || bad "run --warmup-refs 12"
check "$(field "$T/w.json" memory huge_coverage_mean)" 0.9948186528 "huge_coverage_mean after a warm-up"
check "$(field "$T/w.json" memory peak_rss_bytes)" 2105344 "peak_rss_bytes after a warm-up"
# --modes: the comparison has the time-weighted coverage (base: no huge page)
# shellcheck disable=SC2086
$MMUSIM run $PEAK $FREE --modes thp,base >"$T/m.txt" || bad "run --modes"
check "$(grep '^huge coverage mean %' "$T/m.txt" | tr -s ' ')" "huge coverage mean % 99.353 ( 0.00%) 0 (-100.00%)" \
	"--modes: huge coverage mean %"

# --- the timeline: TLB misses per interval, summing to the report's ---------------------
# CPI 1000: 100 instructions are 100000 cycles; rows every 28000 (0.01 ms at 2800 MHz),
# everything happens in the first 50000 cycles, so the rows hold every event
# shellcheck disable=SC2086
$MMUSIM run $PEAK $FREE --set cpu.cpi=1000 --timeline "$T/tl.csv" --timeline-ms 0.01 \
	--json "$T/tl.json" -q || bad "run --timeline"
check "$(head -1 "$T/tl.csv" | cut -d, -f19-25)" "walks,walk_cycles,pgfault,thp_collapse_alloc,itlb_misses,dtlb_misses,stlb_misses" \
	"timeline: the interval columns"
col() { awk -F, -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { s += $k } END { print s }' "$T/tl.csv"; }
check "$(col itlb_misses)" "$(field "$T/tl.json" l1i misses)" "timeline: itlb_misses sum to tlb.l1i.misses"
check "$(col dtlb_misses)" "$(field "$T/tl.json" l1d misses)" "timeline: dtlb_misses sum to tlb.l1d.misses"
check "$(col stlb_misses)" "$(field "$T/tl.json" stlb misses)" "timeline: stlb_misses sum to tlb.stlb.misses"
check "$(col pgfault)" "$(field "$T/tl.json" vmstat pgfault)" "timeline: pgfault sums to vmstat.pgfault"
check "$(col itlb_misses),$(col dtlb_misses),$(col stlb_misses),$(col walks),$(col pgfault)" "1,3,4,4,4" \
	"timeline: the trace's misses, walks and faults"

# --- one name per counter ---------------------------------------------------------------
grep -q '^  pgfault  *4  nr_anon_pages 0, nr_hugetlb_pages 0, nr_page_table_pages [0-9]*, tlb_invalidations 3$' "$T/p.txt" &&
	ok || bad "the text table's vmstat row: $(grep -i fault "$T/p.txt")"
check "$(grep -c -e '^pgfault ' -e '^thp_fault_alloc ' -e '^thp_fault_fallback ' -e '^thp_split_pmd ' -e '^thp_collapse_alloc ' "$T/m.txt")" 5 \
	"--modes: the vmstat rows by their vmstat names"
# shellcheck disable=SC2086
$MMUSIM run $PEAK $FREE --vmas -q >"$T/v.txt" || bad "run --vmas"
check "$(grep '^start' "$T/v.txt" | tr -s ' ')" \
	"start end kind perm th thp rss_KiB huge_KiB pgfault dtlb_misses stlb_misses walk_cycles itlb_misses thp_fault_alloc thp_fault_fallback thp_split_pmd thp_split_page thp_collapse_alloc path/why" \
	"--vmas: the columns named as in --vmas-csv and the JSON"
# no old name left in any output
cat "$T/p.txt" "$T/m.txt" "$T/v.txt" "$T/tl.csv" | grep -wE 'faults|collapses|thp_flt|collap|itlb_mis|THP faults|THP collapses|page faults' &&
	bad "an old counter name is left" || ok

# --- 1 GiB pages on a machine without 1G TLB entries: 2 MiB fractures ------------------
# The built-in machine (Nehalem-class) has no 1G entries in any TLB: the 1 GiB page is
# cached as 2 MiB entries, so five loads in the first 2 MiB hit and one in the next walks.
# (flags 2013528098: MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_1GB; without
# the size bits the default size, 2 MiB, backs the mapping.)
cat >"$T/gig.lackey" <<'EOF'
SYSCALL[7,1](9) sys_mmap ( 0x0, 1073741824, 3, 2013528098, 4294967295, 0 ) --> [pre-success] Success(0x40000000)
 S 40000000,8
 L 40000100,8
 L 40001000,8
 L 40100000,8
 L 40200000,8
 L 40000200,8
EOF
$MMUSIM run "$T/gig.lackey" --set os.mode=hugetlbfs --set os.hugetlbfs.pages_1g=1 --set os.memory=3G \
	--check-invariants --json "$T/g.json" -q || bad "run a 1 GiB page"
check "$(field "$T/g.json" walk walks)" 2 "1G page, no 1G entries: walks"
check "$(sed -n '/"l1d": {/,/"stlb"/p' "$T/g.json" | tr -d ' \n' | grep -o '"2M":{"hits":[0-9]*,"misses":[0-9]*}')" \
	'"2M":{"hits":4,"misses":2}' "1G page, no 1G entries: L1 dTLB 2M fractures"
check "$(field "$T/g.json" vmstat nr_hugetlb_pages_1g)" 1 "the 1 GiB page is mapped"

# --- an empty input, a warm-up longer than the input: said on stderr, exit 0 ------------
: >"$T/empty.lackey"
$MMUSIM run "$T/empty.lackey" --json "$T/e.json" >"$T/e.txt" 2>"$T/e.err"
check "$?" 0 "an empty trace: exit 0"
check "$(cat "$T/e.err")" "mmusim: warning: $T/empty.lackey: no memory reference in the input: every count is 0" \
	"an empty trace: the warning"
[ -s "$T/e.json" ] && grep -q '^  instructions  *0 ' "$T/e.txt" && ok || bad "an empty trace: the reports"
$MMUSIM run "$T/empty.lackey" -q 2>"$T/e.err"
check "$(cat "$T/e.err")" "mmusim: warning: $T/empty.lackey: no memory reference in the input: every count is 0" \
	"an empty trace: the warning under -q too"
$MMUSIM run $PEAK --warmup-refs 1000 --json "$T/wl.json" -q 2>"$T/wl.err"
check "$?" 0 "a warm-up longer than the input: exit 0"
check "$(cat "$T/wl.err")" \
	"mmusim: warning: $PEAK: the input ended before the region of interest: 0 references skipped, 103 simulated in the warm-up, none counted (every count is 0)" \
	"a warm-up longer than the input: the warning"
check "$(field "$T/wl.json" roi started)" false "run.roi.started"
$MMUSIM run $PEAK --skip-refs 50 --warmup-refs 1000 --modes base,thp -q 2>"$T/sk.err"
check "$(cat "$T/sk.err")" \
	"mmusim: warning: $PEAK: the input ended before the region of interest: 50 references skipped, 53 simulated in the warm-up, none counted (every count is 0)" \
	"a skip and warm-up longer than the input, --modes: one warning"
$MMUSIM run $PEAK --sim-refs 5 -q 2>"$T/ok.err"
check "$(cat "$T/ok.err")" "" "a region inside the input: no warning"

echo "  e2e_reports: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
