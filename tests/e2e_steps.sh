#!/bin/bash
# e2e_steps.sh - markers and `run --steps` through the command line, on a tiny
# mtr version 2 trace generated here byte by byte (the layout of
# traces/README.md), and `config host`'s order of overrides. Needs no valgrind
# (tests/native.sh compares real programs with the kernel).
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# header (version 2); MAP 0x10000000 64 KiB rw private anonymous; marker 0;
# stores to 3 pages; marker 1; a load of a 4th page; marker 2; END (8 records)
ref() { printf "\\x$1\\x00\\x$2\\x00\\x10\\x00\\x00\\x00"; } # form 2, size 8: A2 store, A1 load
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

"$MMUSIM" trace info "$T/m.mtr" >"$T/info" 2>&1
check "$(grep '^records:' "$T/info")" "records:      0 ifetch, 1 load, 3 store, 0 modify, 0 events" "trace info records"
check "$(grep '^markers:' "$T/info")" "markers:      3" "trace info markers"

hdr="mode,marker,process,pgfault,pgmajfault,rss_bytes,file_rss_bytes,anon_huge_bytes,thp_fault_alloc,thp_fault_fallback,thp_split_pmd,thp_collapse_alloc,thp_zero_page_alloc,thp_split_page,pglazyfree,pglazyfreed,thp_deferred_split_page"
want="$hdr
base,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0
base,1,0,3,0,12288,0,0,0,0,0,0,0,0,0,0,0
base,2,0,4,0,12288,0,0,0,0,0,0,0,0,0,0,0"
# the counters (the 17 first columns; the last 4 are the run's provenance, checked below)
core() { cut -d, -f1-17 "$1"; }
"$MMUSIM" run "$T/m.mtr" -q --steps "$T/s.csv" --json "$T/s.json" 2>"$T/err"
check "$(core "$T/s.csv")" "$want" "run --steps rows"
check "$(head -1 "$T/s.csv" | cut -d, -f18-)" "run.version,run.build_id,run.config_hash,run.input_id" \
	"run --steps: the provenance columns"
check "$(tail -1 "$T/s.csv" | cut -d, -f18-)" \
	"$(sed -n 's/.*"\(version\|build_id\|config_hash\|input_id\)": "\([^"]*\)".*/\2/p' "$T/s.json" | paste -sd,)" \
	"run --steps: each row's provenance is the JSON report's"
# without the zero page the load takes a page of its own
"$MMUSIM" run "$T/m.mtr" -q --set os.zero_page=false --steps - >"$T/s2.csv" 2>"$T/err"
check "$(core "$T/s2.csv" | tail -1)" "base,2,0,4,0,16384,0,0,0,0,0,0,0,0,0,0,0" "run --steps with os.zero_page=false"

# trace convert keeps the markers; the converted trace gives the same rows
"$MMUSIM" trace convert "$T/m.mtr" "$T/c.mtr.zst" 2>"$T/err"
"$MMUSIM" run "$T/c.mtr.zst" -q --steps "$T/c.csv" 2>"$T/err"
check "$(core "$T/c.csv")" "$want" "run --steps after trace convert"

# no markers: the header alone; a directory is refused
"$MMUSIM" run -w stream:size=1M,iterations=1 -q --steps "$T/w.csv" 2>"$T/err"
check "$(core "$T/w.csv")" "$hdr" "run --steps without markers"
mkdir "$T/dir"
expect_error "$T/dir: Is a directory" "$MMUSIM" run "$T/m.mtr" -q --steps "$T/dir"
expect_error "mmusim: --steps needs a value" "$MMUSIM" run "$T/m.mtr" --steps
# a marker in a version 1 stream is corrupt
printf '\x89MTR\r\n\x1a\n\x01\x00\x00\x00\x00\x00\x00\x00\xc8\x6e\xc0\x01' >"$T/v1.mtr"
expect_error "$T/v1.mtr: corrupt mtr trace at byte 16: unknown tag" "$MMUSIM" run "$T/v1.mtr" -q

# config host: this machine's settings after -c, each --set after them
"$MMUSIM" config host --set os.zero_page=true --set os.mode=base >"$T/host.yaml" 2>"$T/err"
check "$(grep -c '^  zero_page: true$' "$T/host.yaml")" 1 "config host: --set wins"
check "$(grep -c '^  mode: base$' "$T/host.yaml")" 1 "config host: --set os.mode wins"
"$MMUSIM" config host >"$T/host2.yaml" 2>"$T/err"
check "$(grep -c '^  mode: thp$' "$T/host2.yaml")" 1 "config host: os.mode thp"
"$MMUSIM" config show -c "$T/host2.yaml" >"$T/back.yaml" 2>"$T/err"
check "$(cmp -s "$T/host2.yaml" "$T/back.yaml" && echo same)" same "config host loads back unchanged"
if [ -r /sys/kernel/mm/transparent_hugepage/enabled ]; then
	en=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)
	check "$(grep -o 'thp: { enabled: [a-z]*' "$T/host2.yaml")" "thp: { enabled: $en" "config host: THP enabled of sysfs"
fi
expect_error "config: expected 'show' or 'host'" "$MMUSIM" config guest

echo "  e2e_steps: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
