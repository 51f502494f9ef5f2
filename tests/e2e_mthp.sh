#!/bin/bash
# e2e_mthp.sh - anonymous multi-size THP on the command line: os.thp.sizes.* in
# config show (written only when not the kernel's default), bad values and
# profiles without mTHP (exit 2), and the report's "mthp" object with exact
# per-size counters; no "mthp" object in a run without mTHP.
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

echo "  e2e_mthp: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
