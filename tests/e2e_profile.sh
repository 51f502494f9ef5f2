#!/bin/bash
# e2e_profile.sh - the OS-less profile on the command line (os.profile osless
# gives DynamoRIO's counts on the validation trace with a machine file that
# says nothing of the OS), its contradictions, and --set without '='.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# the skylake-lru geometry alone, no os keys: DynamoRIO's row with --set os.profile=osless
cat >"$T/sky.yaml" <<'Y'
tlb:
  l1i:  { 4K: { entries: 128, ways: 8 }, 2M: { entries: 0, ways: 0 } }
  l1d:  { 4K: { entries: 64, ways: 4 }, 2M: { entries: 0, ways: 0 } }
  stlb: { entries: 1536, ways: 12, pages: [4K] }
  policy: lru
Y
row=$(awk '$1 == "skylake-lru" { print $6, $7, $8, $9, $10, $11 }' tests/validation/expected.tsv)
"$MMUSIM" run -c "$T/sky.yaml" tests/validation/small.lackey.zst --set os.mode=base \
	--set os.profile=osless --json "$T/r.json" -q 2>"$T/err"
check "$?" 0 "run under os.profile=osless"
got=$(awk '/"l1i": \{/ { s = "i" } /"l1d": \{/ { s = "d" } /"stlb": \{/ { s = "s" }
		$1 == "\"misses\":" && s && !m[s] { gsub(/,/, "", $2); m[s] = $2 }
		$1 == "\"hits\":" && s && !h[s] { gsub(/,/, "", $2); h[s] = $2 }
		END { print m["i"], m["d"], m["s"], h["i"], h["d"], h["s"] }' "$T/r.json")
check "$got" "$row" "osless on the validation trace: DynamoRIO's skylake-lru row"
# the linux profile with the same geometry: fault-around maps pages without a fault
# (and readahead reads them: 6.18's text read ahead forward from a fault, PG_readahead
# pages that fault-around skips)
"$MMUSIM" run -c "$T/sky.yaml" tests/validation/small.lackey.zst --set os.mode=base -q --json "$T/l.json"
check "$(field "$T/l.json" vmstat pgfault)" 248 "the linux profile: 248 faults (fault-around)"
check "$(field "$T/r.json" vmstat pgfault)" 284 "osless: one fault per page, 284"

# config show prints the profile and its keys, and loads back unchanged
"$MMUSIM" config show --set os.profile=osless >"$T/o.yaml"
check "$(grep -c '^  profile: osless$' "$T/o.yaml")" 1 "config show: profile"
check "$(grep -c '^  zero_page: false$' "$T/o.yaml")" 1 "config show: the profile's zero_page"
"$MMUSIM" config show -c "$T/o.yaml" >"$T/o2.yaml"
check "$(cmp -s "$T/o.yaml" "$T/o2.yaml" && echo same)" same "the profile loads back unchanged"

# a contradiction: exit 2 at the key's position
printf 'os:\n  profile: osless\n  zero_page: true\n' >"$T/bad.yaml"
expect_error "$T/bad.yaml:3:3: os.zero_page: true contradicts os.profile osless" \
	"$MMUSIM" run -c "$T/bad.yaml" -w stream:size=1M
expect_error "--set: os.fault_around_bytes: contradicts os.profile osless (4K: no fault-around)" \
	"$MMUSIM" run --set os.profile=osless --set os.fault_around_bytes=64K -w stream:size=1M
expect_error "--set os.profile=none: os.profile: unknown value 'none' (expected linux or osless)" \
	"$MMUSIM" run --set os.profile=none -w stream:size=1M

# --set without '=': said as such, with the likely intent, before anything else
expect_error "mmusim: --set os.mode: expected path=value (--set os.mode=thp?)" \
	"$MMUSIM" run -w stream:size=1M --set os.mode thp
expect_error "mmusim: --set os.mode: expected path=value (--set os.mode=thp?)" \
	"$MMUSIM" config show --set os.mode thp
expect_error "mmusim: mrc: --set os.mode: expected path=value" \
	"$MMUSIM" mrc -w stream:size=1M --set os.mode
expect_error "mmusim: --set =x: expected path=value" \
	"$MMUSIM" run -w stream:size=1M --set =x

echo "  e2e_profile: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
