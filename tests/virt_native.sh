#!/bin/bash
# virt_native.sh - keeps tests/native/virt_chase.c (issue 15's native measurement,
# `make native-virt`) from rotting without paying for it: the program must compile
# without a warning, its --quick smoke mode (4 MiB, 3 short runs) must write a
# well-formed CSV (the header, one row per workload and page size in order, numbers
# in range; with MADV_NOHUGEPAGE no AnonHugePages at all, which is the kernel's
# promise), one stderr line per run, and exit 2 on a bad argument; and
# tests/native/virt_measure.sh must keep the CSV and the machine record, and refuse
# an output that is not a regular file. The numbers themselves are not checked:
# they are this machine's, and plots/data/virt-native.csv keeps the real ones.
set -u
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
skip() { echo "virt_native: SKIP: $*"; exit 0; }
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

[ -r /proc/self/smaps ] || skip "no /proc/self/smaps"
command -v cc >/dev/null 2>&1 || skip "no C compiler"
cc -std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-o "$T/virt_chase" tests/native/virt_chase.c 2>"$T/cc.err" || { cat "$T/cc.err"; exit 1; }
[ -s "$T/cc.err" ] && bad "virt_chase.c compiles with warnings: $(head -3 "$T/cc.err")" ||
	ok "virt_chase.c compiles without a warning"

# check_csv FILE: the quick run's CSV
check_csv() {
	awk -F, '
	NR == 1 { if ($0 != "workload,footprint,pages,ns_per_step,anon_huge_share,runs") { print "header: " $0; bad = 1 }; next }
	{
		want = (NR <= 3 ? "chase" : "gups") "," 4194304 "," (NR % 2 == 0 ? "4K" : "thp")
		if (NF != 6 || $1 "," $2 "," $3 != want) { print "row " NR ": " $0 " (want " want ",...)"; bad = 1 }
		if ($4 !~ /^[0-9]+\.[0-9][0-9]$/ || $4 + 0 <= 0) { print "row " NR ": ns_per_step " $4; bad = 1 }
		if ($5 !~ /^[01]\.[0-9][0-9][0-9][0-9]$/ || $5 + 0 > 1) { print "row " NR ": anon_huge_share " $5; bad = 1 }
		if ($3 == "4K" && $5 != "0.0000") { print "row " NR ": huge pages under MADV_NOHUGEPAGE: " $5; bad = 1 }
		if ($6 != "3") { print "row " NR ": runs " $6; bad = 1 }
	}
	END { if (NR != 5) { print NR " lines, want 5"; bad = 1 }; exit bad }' "$1"
}

if "$T/virt_chase" --quick >"$T/q.csv" 2>"$T/q.err"; then
	msg=$(check_csv "$T/q.csv") && ok "--quick writes a well-formed CSV" || bad "--quick CSV: $msg"
	n=$(grep -c '^\(chase\|gups\) 4194304 \(4K\|thp\) run [123]: [0-9.]* ns/step, AnonHugePages [01]\.[0-9]*$' "$T/q.err")
	[ "$n" = 12 ] && ok "one stderr line per run (12)" || bad "$n per-run stderr lines, want 12: $(head -3 "$T/q.err")"
else
	bad "--quick exited $?: $(tail -2 "$T/q.err")"
fi

"$T/virt_chase" --bogus >"$T/b.out" 2>"$T/b.err"
rc=$?
[ $rc = 2 ] && grep -q '^virt_chase: --bogus: unknown argument$' "$T/b.err" && [ ! -s "$T/b.out" ] &&
	ok "a bad argument exits 2 with a message" || bad "bad argument: exit $rc, $(head -1 "$T/b.err")"
grep -qx 'usage: virt_chase \[--quick | --model\]' "$T/b.err" && ok "the usage names --model" ||
	bad "usage line: $(sed -n 2p "$T/b.err")"

# the runner of make native-virt, on the quick mode
printf '#!/bin/sh\nexec "%s" --quick\n' "$T/virt_chase" >"$T/quick" && chmod +x "$T/quick"
if sh tests/native/virt_measure.sh "$T/quick" "$T/out" >/dev/null 2>"$T/m.err"; then
	msg=$(check_csv "$T/out/virt-native.csv") && ok "virt_measure.sh keeps the CSV" ||
		bad "virt_measure.sh CSV: $msg"
	for want in "^date: 20" "^kernel: $(uname -r) " "^load average before: " "^load average after: " \
		"^per run (stderr of virt_chase):" "^gups 4194304 thp run 3: "; do
		grep -q "$want" "$T/out/virt-native.txt" || bad "virt-native.txt has no line '$want'"
	done
	[ ! -e "$T/out/virt-native.csv.tmp" ] && [ ! -e "$T/out/virt-native.txt.tmp" ] &&
		ok "virt_measure.sh writes the machine record and leaves no temporary file" ||
		bad "virt_measure.sh left a temporary file"
else
	bad "virt_measure.sh exited $?: $(tail -2 "$T/m.err")"
fi
mkdir -p "$T/dir/virt-native.csv"
sh tests/native/virt_measure.sh "$T/quick" "$T/dir" >/dev/null 2>"$T/d.err"
rc=$?
[ $rc = 2 ] && [ -d "$T/dir/virt-native.csv" ] && grep -q 'is not a regular file' "$T/d.err" &&
	ok "virt_measure.sh replaces no directory (exit 2)" || bad "directory output: exit $rc, $(head -1 "$T/d.err")"

[ $fail = 0 ] && echo "virt_native: all passed"
exit $fail
