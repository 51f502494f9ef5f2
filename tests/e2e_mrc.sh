#!/bin/bash
# e2e_mrc.sh - `mmusim mrc` through the command line: a CSV row equals the
# `mmusim run` it stands for (the library's equality is tests/check_mrc.c), the
# CSV's shape, --sets, the figure in both formats, and the bad-input contract
# (exit 2, nothing written).
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh
XZ=traces/xz-6.lackey.zst

"$MMUSIM" mrc $XZ -o "$T/xz.csv" 2>"$T/err"
check "$?" 0 "mrc exit status"
check "$(head -1 "$T/xz.csv")" "side,page_size,entries,misses,miss_ratio,lookups,sets,ways,run.version,run.build_id,run.config_hash,run.input_id" "CSV header"
# base pages: the i- and d-side 4K curves, 4096 points each
check "$(cut -d, -f1,2 "$T/xz.csv" | sed 1d | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" \
	"4096 l1d,4K 4096 l1i,4K " "curves and points"
grep -q '^mrc: traces/xz-6.lackey.zst: 1 sets, 1..4096 ways; ' "$T/err" && ok || bad "summary line: $(cat "$T/err")"

# point l1d 4K 64 = run with that array, fully associative, no STLB
"$MMUSIM" run $XZ --set tlb.l1d.4K.entries=64 --set tlb.l1d.4K.ways=64 --set 'tlb.stlb=[]' \
	--json "$T/r.json" --quiet
m=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['tlb']['l1d']['4K']; print(t['misses'], t['hits'] + t['misses'])" "$T/r.json")
check "$(awk -F, '$1 == "l1d" && $2 == "4K" && $3 == 64 { print $4, $6 }' "$T/xz.csv")" "$m" "l1d 4K 64 against run"

# 16 sets, ways 1..8 (entries 16..128): point 4 ways against run
"$MMUSIM" mrc $XZ --sets 16 --max-entries 128 -o "$T/s.csv" 2>/dev/null
check "$(sed 1d "$T/s.csv" | wc -l)" 16 "16 sets: 8 points per side"
"$MMUSIM" run $XZ --set tlb.l1i.4K.entries=64 --set tlb.l1i.4K.ways=4 --set 'tlb.stlb=[]' \
	--json "$T/r.json" --quiet
m=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['tlb']['l1i']['4K']; print(t['misses'], t['hits'] + t['misses'])" "$T/r.json")
check "$(awk -F, '$1 == "l1i" && $3 == 64 && $7 == 16 && $8 == 4 { print $4, $6 }' "$T/s.csv")" "$m" "l1i 16 sets x 4 ways against run"

# a workload, standard output, the figure as PNG and SVG
"$MMUSIM" mrc -w stream:size=1M,iterations=1 --max-entries 64 --plot "$T/f.png" >"$T/w.csv" 2>/dev/null
check "$?" 0 "workload to stdout with --plot"
check "$(sed 1d "$T/w.csv" | wc -l)" 64 "workload: one curve of 64 points"
[ -s "$T/f.png" ] && ok || bad "no PNG"
"$MMUSIM" mrc $XZ --max-entries 256 --plot "$T/f.svg" -o /dev/null 2>/dev/null
grep -q '<svg' "$T/f.svg" && ok || bad "no SVG"

# bad input: exit 2, no CSV
expect_error "mmusim: mrc: no TRACE or -w WORKLOAD given" "$MMUSIM" mrc
expect_error "mmusim: mrc: --sets '0' is not a count" "$MMUSIM" mrc $XZ --sets 0
expect_error "mmusim: mrc: --max-entries 'x' is not a count" "$MMUSIM" mrc $XZ --max-entries x
expect_error "mmusim: mrc: --sets is more than --max-entries (64)" "$MMUSIM" mrc $XZ --sets 128 --max-entries 64
expect_error "mmusim: mrc: --plot 'f.jpg' must end in .png, .svg or .pdf" "$MMUSIM" mrc $XZ --plot f.jpg
expect_error "mmusim: mrc: give a TRACE or -w WORKLOAD, not both" "$MMUSIM" mrc $XZ -w stream:size=1M
expect_error "--set tlb.bogus=1: unknown key" "$MMUSIM" mrc $XZ --set tlb.bogus=1
expect_error "$T: Is a directory" "$MMUSIM" mrc $XZ -o "$T"
printf ' L zz,8\n' >"$T/bad.lackey"
expect_error "$T/bad.lackey:1: bad hex address 'zz'" "$MMUSIM" mrc "$T/bad.lackey" -o "$T/bad.csv"
[ -e "$T/bad.csv" ] && bad "a failed mrc left $T/bad.csv" || ok

echo "  e2e_mrc: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
