#!/bin/bash
# e2e_underused.sh - the underused THP shrinker (Linux 6.12+) and the per-size
# rows on the command line: os.thp.shrink_underused in config show (written
# only when 0), refused before 6.12 (exit 2); a run under memory pressure whose
# kswapd splits the THPs holding one written page each when max_ptes_none is
# below 511 (vmstat.thp_underused_split_page, in the JSON only when not 0, and
# in the text report), none under 511 or with the knob off; the text report's
# "mthp <size>" lines and the --vmas columns of the mTHP sizes that moved.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

check "$($MMUSIM config show | grep -c shrink_underused)" "0" "config show: not written at its default"
check "$($MMUSIM config show --set os.thp.shrink_underused=false | grep -o "shrink_underused: *[a-z]*" | tr -d ' ')" \
	"shrink_underused:false" "config show: written when off"
expect_error "--set: os.thp.shrink_underused: needs os.kernel 6.12 or later" \
	$MMUSIM config show --set os.kernel=6.8 --set os.thp.shrink_underused=false

# 48 THPs of one written page each on a 64M machine: kswapd wakes at the 31st fault
{
	echo "SYSCALL[7,1](9) sys_mmap ( 0x0, 100663296, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)"
	for i in $(seq 0 47); do printf ' S %x,8\n' $((0x40000010 + i * 2097152)); done
} >"$T/p.lackey"
run() { $MMUSIM run "$T/p.lackey" --set os.mode=thp --set os.memory=64M "$@"; }
run --set os.khugepaged.max_ptes_none=409 --json "$T/u.json" --quiet
check "$?" "0" "run: underused"
check "$(field "$T/u.json" vmstat thp_underused_split_page)" "30" "the 30 THPs queued when kswapd ran split"
check "$(field "$T/u.json" vmstat thp_split_page)" "30" "each a thp_split_page"
check "$(field "$T/u.json" vmstat pswpout)" "0" "no swap-out: the shrinker freed enough"
# each split left its written page in its 2M block, so no order-9 block is free
# for the 17 faults after (GFP_TRANSHUGE_LIGHT: no compaction)
check "$(field "$T/u.json" vmstat thp_fault_fallback)" "17" "the pinned blocks: 17 fallbacks"
check "$(field "$T/u.json" memory rss_bytes)" "2289664" "rss: 30 + 17 pages and one THP"
run --json "$T/n.json" --quiet
check "$(grep -c thp_underused_split_page "$T/n.json")" "0" "max_ptes_none 511: not in the JSON"
check "$(field "$T/n.json" vmstat pswpout)" "16384" "max_ptes_none 511: 32 THPs swapped out whole"
run --set os.khugepaged.max_ptes_none=409 --set os.thp.shrink_underused=false --json "$T/o.json" --quiet
check "$(grep -c thp_underused_split_page "$T/o.json")" "0" "shrink_underused off: not queued"
check "$(run --set os.khugepaged.max_ptes_none=409 | grep underused | tr -s ' ')" \
	" thp_underused_split_page 30 (of thp_split_page 30)" "text: the underused line"

# the text report's per-size lines and the --vmas columns of the sizes that moved
cat >"$T/m.lackey" <<'TR'
SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)
 S 40000010,8
 S 40010010,8
 S 40200010,8
TR
$MMUSIM run "$T/m.lackey" --set os.mode=thp --set os.thp.enabled=never --set os.thp.sizes.64K.enabled=always \
	--set os.thp.sizes.16K.enabled=always --vmas >"$T/m.txt"
check "$(grep '^  mthp' "$T/m.txt")" "  mthp 64K: anon_fault_alloc 3, nr_anon 3" "text: one line, the size that moved"
check "$(grep -o 'anon_fault_alloc\.[0-9A-Z]*' "$T/m.txt" | tr '\n' ' ')" "anon_fault_alloc.64K " "--vmas: the 64K columns only"
check "$(awk '$3 == "anon" { print $(NF - 2), $(NF - 1) }' "$T/m.txt")" "3 0" "--vmas: 3 allocations, no fallback"
check "$($MMUSIM run "$T/m.lackey" --set os.mode=thp | grep -c -e '^  mthp' -e 'anon_fault_alloc\.')" "0" \
	"no mTHP: no lines, no columns"

echo "  e2e_underused: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
