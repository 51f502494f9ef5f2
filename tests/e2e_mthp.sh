#!/bin/bash
# e2e_mthp.sh - anonymous multi-size THP on the command line: os.thp.sizes.* in
# config show (written only when not the kernel's default), bad values and
# profiles without mTHP (exit 2), and the report's "mthp" object with exact
# per-size counters; no "mthp" object in a run without mTHP; run --steps's
# per-size columns (mthp_<S>_<counter>) when a size below 2M is enabled.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

check "$($MMUSIM config show | grep -c sizes)" "0" "config show: no sizes at the defaults"
check "$($MMUSIM config show --set os.thp.sizes.64K.enabled=always --set os.thp.sizes.2M.enabled=never | grep sizes | tr -d ' ')" \
	"sizes:{64K:{enabled:always},2M:{enabled:never}}" "config show: the sizes set"
$MMUSIM config show --set os.thp.sizes.64K.enabled=madvise >"$T/c.yaml"
check "$($MMUSIM config show -c "$T/c.yaml" | grep sizes | tr -d ' ')" "sizes:{64K:{enabled:madvise}}" "config: round trip"
expect_error "--set os.thp.sizes.64K.enabled=bogus: os.thp.sizes.64K.enabled: unknown value 'bogus' (expected never, always, inherit or madvise)" \
	$MMUSIM config show --set os.thp.sizes.64K.enabled=bogus
expect_error "--set: os.thp.sizes.64K.enabled: needs os.kernel 6.8 or later" \
	$MMUSIM config show --set os.kernel=6.6 --set os.thp.sizes.64K.enabled=always
expect_error "--set os.thp.sizes.8K.enabled=always: unknown key" \
	$MMUSIM config show --set os.thp.sizes.8K.enabled=always

cat >"$T/t.lackey" <<'TR'
SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)
 S 40000010,8
 S 40001000,8
 S 40010000,8
 L 40020000,8
 S 40020000,8
SYSCALL[7,1](11) sys_munmap ( 0x40010000, 8192 )[sync] --> Success(0x0)
TR
$MMUSIM run "$T/t.lackey" --set os.mode=thp --set os.thp.enabled=never --set os.thp.sizes.64K.enabled=always \
	--json "$T/m.json" --quiet
check "$?" "0" "run with 64K mTHP"
check "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["mthp"], sort_keys=True))' "$T/m.json")" \
	'{"64K": {"anon_fault_alloc": 2, "anon_fault_fallback": 0, "anon_fault_fallback_charge": 0, "nr_anon": 2, "nr_anon_partially_mapped": 1, "split": 0, "split_deferred": 1, "split_failed": 0, "swpout": 0, "swpout_fallback": 0}}' \
	"run: the 64K counters"
check "$(field "$T/m.json" vmstat nr_anon_pages)" "31" "run: 16 + 14 mTHP pages and a COW page"
check "$(field "$T/m.json" vmstat pgfault)" "4" "run: one fault per mTHP"
# the 6.8 profile has mTHP but no per-size counters (6.10+)
$MMUSIM run "$T/t.lackey" --set os.mode=thp --set os.kernel=6.8 --set os.thp.enabled=never \
	--set os.thp.sizes.64K.enabled=always --json "$T/m68.json" --quiet
check "$(grep -c '"mthp"' "$T/m68.json")" "0" "run 6.8: no per-size counters"
check "$(field "$T/m68.json" vmstat nr_anon_pages)" "31" "run 6.8: the same pages"
# no mTHP: no "mthp" object, the report as before
$MMUSIM run "$T/t.lackey" --set os.mode=thp --json "$T/p.json" --quiet
check "$(grep -c '"mthp"' "$T/p.json")" "0" "run without mTHP: no mthp object"

# run --steps: the per-size counters as columns mthp_<S>_<counter> (system-wide, as
# hugepages-<size>kB/stats shows them), for the enabled sizes and 2M, only when a
# size below 2M is enabled. A tiny mtr trace (tests/e2e_steps.sh's): MAP 64 KiB at
# 0x10000000; marker 0; stores to 3 pages; marker 1; a load of a 4th; marker 2.
ref() { printf "\\x$1\\x00\\x$2\\x00\\x10\\x00\\x00\\x00"; }
{
	printf '\x89MTR\r\n\x1a\n\x02\x00\x00\x00\x00\x00\x00\x00'
	printf '\xc3\x80\x80\x80\x80\x01\x80\x80\x04\x03\x22\x00\x00\x00\x00'
	printf '\xc8\x6e'
	ref a2 00; ref a2 10; ref a2 20
	printf '\xc8\x6e'
	ref a1 30
	printf '\xc8\x6e'
	printf '\xc0\x08'
} >"$T/m.mtr"
cols=""
for s in 16K 2M; do
	for c in anon_fault_alloc anon_fault_fallback anon_fault_fallback_charge swpout swpout_fallback split \
		split_failed split_deferred nr_anon nr_anon_partially_mapped; do
		cols="$cols,mthp_${s}_$c"
	done
done
hdr="mode,marker,process,pgfault,pgmajfault,rss_bytes,file_rss_bytes,anon_huge_bytes,thp_fault_alloc,thp_fault_fallback,thp_split_pmd,thp_collapse_alloc,thp_zero_page_alloc,thp_split_page,pglazyfree,pglazyfreed,thp_deferred_split_page"
$MMUSIM run "$T/m.mtr" -q --set os.mode=thp --set os.thp.enabled=never --set os.thp.sizes.16K.enabled=always \
	--steps "$T/s.csv" 2>"$T/err"
check "$?" "0" "run --steps with 16K"
check "$(head -1 "$T/s.csv" | cut -d, -f1-37)" "$hdr$cols" "run --steps: the per-size columns"
check "$(sed 1d "$T/s.csv" | cut -d, -f1-37)" "thp,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0
thp,1,0,1,0,16384,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0
thp,2,0,1,0,16384,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0" \
	"run --steps: one 16K folio for the 4 pages"
check "$(head -1 "$T/s.csv" | cut -d, -f38-)" "run.version,run.build_id,run.config_hash,run.input_id" \
	"run --steps: the provenance columns stay last"
$MMUSIM run "$T/m.mtr" -q --set os.mode=thp --steps "$T/p.csv" 2>"$T/err"
check "$(head -1 "$T/p.csv" | cut -d, -f1-17)" "$hdr" "run --steps without mTHP: the columns as before"
check "$(head -1 "$T/p.csv" | grep -c mthp_)" "0" "run --steps without mTHP: no per-size columns"

echo "  e2e_mthp: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
