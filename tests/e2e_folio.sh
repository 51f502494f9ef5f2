#!/bin/bash
# e2e_folio.sh - large page-cache folios on the command line
# (os.file_cache_folio_size, sim/filemap.c): a lackey trace writing a 1 MiB
# shared file mapping page by page under a warm cache of 64 KiB folios takes
# one fault per folio on 6.18 (finish_fault() maps the whole folio) and one per
# page on 6.12 (ext4 had no large folios before 6.16); a size that is not a
# power of two in 4K..1M is a config error (exit 2), on the command line and in
# a config file. Run from the repository root by tests/run.sh (make check) with
# MMUSIM set to the binary under test; tests/check_filemap.c checks the details,
# tests/native.sh compares with the kernel.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

{
	echo "SYSCALL[7,1](9) sys_mmap ( 0x0, 1048576, 3, 1, 3, 0 ) --> [pre-success] Success(0x40000000)"
	for i in $(seq 0 255); do printf ' S %x,8\n' $((0x40000000 + i * 4096 + 16)); done
} >"$T/shared.lackey"

# run KERNEL FOLIO: the report's vmstat pgfault and nr_mapped
run() {
	"$MMUSIM" run "$T/shared.lackey" --format lackey -q --json "$T/r.json" --set os.kernel="$1" \
		--set os.file_cache=warm --set os.file_cache_folio_size="$2" 2>"$T/err" || { echo "exit $?"; return; }
	echo "$(field "$T/r.json" vmstat pgfault) $(field "$T/r.json" vmstat nr_mapped) $(field "$T/r.json" vmstat nr_file_pages)"
}
check "$(run 6.18 64K)" "16 256 256" "6.18, 64 KiB folios: a fault per folio"
check "$(run 6.18 1M)" "1 256 256" "6.18, 1 MiB folios: one fault maps the whole mapping"
check "$(run 6.18 4K)" "256 256 256" "6.18, order-0 pages: a fault per page"
check "$(run 6.12 64K)" "256 256 256" "6.12: no large folios, a fault per page"

expect_error "--set os.file_cache_folio_size=2M: os.file_cache_folio_size: 2M is not a power of two in 4K..1M" \
	"$MMUSIM" run "$T/shared.lackey" --format lackey -q --set os.file_cache_folio_size=2M
expect_error "--set os.file_cache_folio_size=12K: os.file_cache_folio_size: 12K is not a power of two in 4K..1M" \
	"$MMUSIM" run "$T/shared.lackey" --format lackey -q --set os.file_cache_folio_size=12K
printf 'os:\n  file_cache: warm\n  file_cache_folio_size: 3K\n' >"$T/bad.yaml"
expect_error "$T/bad.yaml:3:" "$MMUSIM" run "$T/shared.lackey" --format lackey -q -c "$T/bad.yaml"
check "$(grep -c 'not a power of two in 4K..1M' "$T/err")" 1 "the config file's error names the rule"

echo "  e2e_folio: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
