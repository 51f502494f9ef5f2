#!/bin/bash
# vmas.sh - `run --vmas`, `--vmas-csv` and the JSON's "vmas" through the command
# line (sim/vmas.c): the table of tests/golden/mixed.lackey against its golden
# (tests/golden/mixed.vmas.txt: brk, mmap + MADV_HUGEPAGE, mprotect, munmap,
# mremap and implicit regions, in base and thp mode), the CSV's rows summing to
# the report's totals, and the option's bad values (exit 2, one line).
# Re-bless the golden on purpose only:
#   ./mmusim run -c configs/nehalem.yaml tests/golden/mixed.lackey --modes base,thp --vmas -q \
#     >tests/golden/mixed.vmas.txt
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

G=tests/golden/mixed.lackey
"$MMUSIM" run -c configs/nehalem.yaml "$G" --modes base,thp --vmas -q >"$T/got" 2>"$T/err"
if diff -u tests/golden/mixed.vmas.txt "$T/got" >"$T/diff"; then ok; else bad "golden --vmas"; head -30 "$T/diff"; fi

# --vmas=2: two rows per mode; the text report comes first without -q
"$MMUSIM" run -c configs/nehalem.yaml "$G" --vmas=2 >"$T/got" 2>"$T/err"
check "$(grep -c '^0000' "$T/got")" "2" "--vmas=2 rows"
check "$(grep -c 'mappings by walk cycles (2 of 6' "$T/got")" "1" "--vmas=2 heading"

# the CSV's walk cycles, walks, faults and RSS sum to the JSON report's totals
"$MMUSIM" run -c configs/nehalem.yaml "$G" -q --set os.mode=thp --vmas-csv "$T/v.csv" --json "$T/r.json"
col() { awk -F, -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { s += $k } END { print s }' "$T/v.csv"; }
check "$(col walk_cycles)" "$(field "$T/r.json" walk cycles)" "CSV walk_cycles sum"
check "$(col walks)" "$(field "$T/r.json" walk walks)" "CSV walks sum"
check "$(col pgfault)" "$(field "$T/r.json" vmstat pgfault)" "CSV pgfault sum"
check "$(col thp_fault_alloc)" "$(field "$T/r.json" vmstat thp_fault_alloc)" "CSV thp_fault_alloc sum"
check "$(col rss_bytes)" "$(field "$T/r.json" memory rss_bytes)" "CSV rss_bytes sum"
check "$(head -1 "$T/v.csv" | cut -d, -f1-6)" "mode,id,name,start,end,kind" "CSV header"
check "$(grep -c '"thp_ineligible_why"' "$T/r.json")" "6" "JSON vmas rows"

# --vmas=N limits the CSV too; `plot` draws its walk cycles per mapping as bars
"$MMUSIM" run -c configs/nehalem.yaml "$G" --modes base,thp --vmas=3 --vmas-csv "$T/top.csv" >/dev/null
check "$(grep -c '^thp,' "$T/top.csv") $(grep -c '^base,' "$T/top.csv")" "3 3" "--vmas=3 --vmas-csv rows per mode"
check "$(sed -n 2p "$T/top.csv" | cut -d, -f1-6)" "base,4,anon@0x4a00000,0x4a00000,0x5400000,anon" "CSV first row"
if command -v gnuplot >/dev/null 2>&1; then
	"$MMUSIM" plot "$T/v.csv" -x name -y walk_cycles --kind bars -o "$T/v.png" >/dev/null 2>"$T/err"
	if [ -s "$T/v.png" ]; then ok; else bad "plot of the vmas CSV: $(cat "$T/err")"; fi
fi

expect_error "mmusim: --vmas=N: '0' is not a number of rows" "$MMUSIM" run "$G" --vmas=0
expect_error "mmusim: --vmas=N: 'x' is not a number of rows" "$MMUSIM" run "$G" --vmas=x
expect_error "mmusim: --vmas-csv needs a value" "$MMUSIM" run "$G" --vmas-csv

echo "  vmas: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
