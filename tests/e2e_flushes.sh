#!/bin/bash
# e2e_flushes.sh - on the command line: MAP_HUGETLB's page size (the MAP_HUGE_*
# bits, else os.hugetlbfs.default_size, which config show writes only when 1G and
# config host reads from /proc/meminfo), the warning when a hugetlb mapping got
# 4 KiB pages (reservations are not modelled), a size x86-64 lacks as a trace
# error, and the flushes Linux skips (tests/check_flushes.c has the scenarios).
# Run from the repository root by tests/run.sh with MMUSIM set.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

gib() { # a 1 GiB MAP_HUGETLB mapping with mmap flags $1, stores in its first two 2 MiB
	printf 'SYSCALL[7,1](9) sys_mmap ( 0x0, 1073741824, 3, %s, 4294967295, 0 ) --> [pre-success] Success(0x40000000)\n S 40000000,8\n S 40200000,8\n' "$1"
}
P="--set os.memory=3G --set os.hugetlbfs.pages=2 --set os.hugetlbfs.pages_1g=1"

# --- the page size of a MAP_HUGETLB mapping -------------------------------------------
gib 262178 >"$T/default.lackey"
$MMUSIM run "$T/default.lackey" $P --json "$T/d.json" -q 2>"$T/err" || bad "run: default size"
check "$(field "$T/d.json" vmstat nr_hugetlb_pages)/$(field "$T/d.json" vmstat nr_hugetlb_pages_1g)" 2/0 \
	"MAP_HUGETLB, no size bits: 2 MiB pages"
check "$(cat "$T/err")" "" "pages enough: no warning"
$MMUSIM run "$T/default.lackey" $P --set os.hugetlbfs.default_size=1G --json "$T/g.json" -q ||
	bad "run: default 1G"
check "$(field "$T/g.json" vmstat nr_hugetlb_pages)/$(field "$T/g.json" vmstat nr_hugetlb_pages_1g)" 0/1 \
	"MAP_HUGETLB, default_size 1G: a 1 GiB page"
gib 2013528098 >"$T/1g.lackey" # | MAP_HUGE_1GB (30 << 26)
$MMUSIM run "$T/1g.lackey" $P --json "$T/b.json" -q || bad "run: MAP_HUGE_1GB"
check "$(field "$T/b.json" vmstat nr_hugetlb_pages_1g)" 1 "MAP_HUGE_1GB: a 1 GiB page"

# --- no pool: 4 KiB pages, a warning, exit 0 -------------------------------------------
$MMUSIM run "$T/1g.lackey" --set os.memory=3G --json "$T/w.json" -q 2>"$T/err"
check "$?" 0 "no 1G pool: exit 0"
check "$(cat "$T/err")" "mmusim: warning: $T/1g.lackey: 2 faults in MAP_HUGETLB mappings found no free huge page of the mapping's size (os.mode base) and got 4 KiB pages; Linux reserves those pages at mmap and would have refused the mapping: raise os.hugetlbfs.pages or os.hugetlbfs.pages_1g" \
	"no 1G pool: the warning"
check "$(field "$T/w.json" vmstat nr_anon_pages)" 2 "no 1G pool: 4 KiB pages"

# --- a size x86-64 has no pages of: exit 2, file:line ------------------------------------
gib 1476657186 >"$T/4m.lackey" # 22 << 26
expect_error "$T/4m.lackey:1: mmap with MAP_HUGETLB of 2^22-byte pages succeeded (x86-64 has 2 MiB and 1 GiB pages only)" \
	$MMUSIM run "$T/4m.lackey" -q

# --- the key: written when 1G, read from /proc/meminfo -----------------------------------
check "$($MMUSIM config show | grep -c default_size)" 0 "config show: default_size left out at 2M"
check "$($MMUSIM config show --set os.hugetlbfs.default_size=1G | grep -o 'default_size: 1G')" \
	"default_size: 1G" "config show: default_size written at 1G"
expect_error "--set os.hugetlbfs.default_size=4M: os.hugetlbfs.default_size: unknown value '4M' (expected 2M or 1G)" \
	$MMUSIM config show --set os.hugetlbfs.default_size=4M
hp=$(awk '$1 == "Hugepagesize:" { print $2 }' /proc/meminfo)
if [ "$hp" = 1048576 ]; then want="default_size: 1G"; else want=""; fi
check "$($MMUSIM config host | grep -o 'default_size: 1G')" "$want" "config host: Hugepagesize $hp kB"

# --- a flush Linux skips: wp_page_reuse() on a shared file page ---------------------------
printf 'SYSCALL[7,1](9) sys_mmap ( 0x0, 65536, 3, 1, 3, 0 ) --> [pre-success] Success(0x40000000)\n L 40000000,8\n S 40000000,8\n' >"$T/shared.lackey"
$MMUSIM run "$T/shared.lackey" --json "$T/s.json" -q || bad "run: shared file store"
check "$(field "$T/s.json" vmstat pgfault)/$(field "$T/s.json" vmstat tlb_invalidations)" 2/0 \
	"a store to a shared file page: a fault, no flush"

echo "  e2e_flushes: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
