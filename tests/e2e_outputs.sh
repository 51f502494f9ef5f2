#!/bin/bash
# e2e_outputs.sh - what mmusim writes, end to end: a --timeline that cannot run
# away (the interval's and cpu.cpi's ranges, idle rows left out, SIGTERM within a
# second), no output that replaces an input or another output (run, mrc, sweep,
# merge, trace convert, plot), and every output opened before the work (a bad path
# or no permission is exit 2 at once; a failed run leaves no file and the old one).
# Each case is named after the item it checks: timeline-*, distinct-*, upfront-*.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# elapsed milliseconds of "$@" (stdout and stderr to $T/out, $T/err; status in $rc), killed after 5 s
timed() {
	t0=$(date +%s%N)
	timeout -k 1 5 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
# no temporary left in $T (NAME.tmp.PID)
no_tmp() { check "$(find "$T" -name '*.tmp.*' | wc -l)" 0 "$1: temporaries left"; }

"$MMUSIM" trace gen -w stream:size=1M -o "$T/t.mtr" || exit 1
cp "$T/t.mtr" "$T/t0.mtr"

# --- timeline: bounded interval, bounded rows, bounded cpu.cpi ----------------

# an interval of 1 ns wrote a row per elapsed nanosecond (gigabytes a minute): exit 2 now
timed "$MMUSIM" run -q --timeline-ms 0.000001 --timeline "$T/tl.csv"
check "$rc" 2 "timeline-ms 1 ns: exit"
check "$(head -1 "$T/err")" "mmusim: --timeline-ms: '0.000001' is not a number of milliseconds from 0.001 (1 us) up" \
	"timeline-ms 1 ns: message"
check "$([ "$ms" -lt 1000 ] && echo fast)" fast "timeline-ms 1 ns: ends under a second ($ms ms)"
check "$(ls "$T" | grep -c '^tl\.csv')" 0 "timeline-ms 1 ns: no file"

# cpu.cpi=1e15 made every batch pass billions of intervals, and SIGTERM waited for them
timed "$MMUSIM" run -q --set cpu.cpi=1e15 --timeline "$T/tl.csv"
check "$rc" 2 "timeline cpi 1e15: exit"
check "$(head -1 "$T/err")" "--set cpu.cpi=1e15: cpu.cpi: 1e+15 is not a number of cycles per instruction from 0 to 1000" \
	"timeline cpi 1e15: message"
check "$([ "$ms" -lt 1000 ] && echo fast)" fast "timeline cpi 1e15: ends under a second ($ms ms)"
check "$(ls "$T" | grep -c '^tl\.csv')" 0 "timeline cpi 1e15: no file"

# cpu.cpi=1e308 gave 0 instruction cycles (a double beyond 2^64 converted to an integer)
printf 'cpu:\n  cpi: 1e308\n' >"$T/cpi.yaml"
expect_error "$T/cpi.yaml:2:3: cpu.cpi: 1e+308 is not a number of cycles per instruction from 0 to 1000" \
	"$MMUSIM" run -q -c "$T/cpi.yaml"
# the largest CPI counts its instruction cycles exactly
"$MMUSIM" run -q --set cpu.cpi=1000 -w stream:size=1M --json "$T/c.json"
check "$(field "$T/c.json" cycles instructions)" "$(( $(field "$T/c.json" refs instructions) * 1000 ))" \
	"timeline cpi 1000: instruction cycles"

# the longest CPI at the shortest interval: one row per interval was 3557838 rows;
# now at most two per batch (the batch's, and the one closing its idle stretch)
timed "$MMUSIM" run -q -w stream:size=1M --set cpu.cpi=1000 --timeline-ms 0.001 --timeline "$T/tl.csv"
check "$rc" 0 "timeline rows: exit"
check "$(wc -l <"$T/tl.csv")" 2819 "timeline rows: rows (header included)"
check "$(cat "$T/err")" "mmusim: --timeline: 3555019 idle intervals left out (simulated time passed them within one batch of records; the row after them repeats them)" \
	"timeline rows: the note"
check "$(sed -n 2,3p "$T/tl.csv" | cut -d, -f2,3)" "0.001000,2800
2.193000,6140400" "timeline rows: a batch's row, then the one closing its idle stretch"
check "$([ "$ms" -lt 1000 ] && echo fast)" fast "timeline rows: under a second ($ms ms)"
rm -f "$T/tl.csv"

rm -f "$T"/*.tmp.* # (a run killed above, before the fix)

# SIGTERM ends a long run within a second: exit 130, the existing results untouched,
# no temporary left; with one simulator, with three (the pool), with a timeline
for args in "-w gups:size=1G,updates=400000000" "-w gups:size=1G,updates=400000000 --modes base,thp,hugetlbfs" \
	"-w gups:size=1G,updates=400000000 --set cpu.cpi=1000 --timeline-ms 0.001 --timeline $T/keep.csv"; do
	echo old >"$T/keep.json"
	echo old >"$T/keep.csv"
	"$MMUSIM" run -q $args --json "$T/keep.json" 2>"$T/err" &
	pid=$!
	sleep 1
	t0=$(date +%s%N)
	kill -TERM $pid
	for i in $(seq 40); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	kill -0 $pid 2>/dev/null && kill -KILL $pid
	wait $pid
	rc=$?
	check "$rc" 130 "timeline SIGTERM ($args): exit"
	check "$([ "$ms" -lt 1500 ] && echo fast)" fast "timeline SIGTERM ($args): within a second ($ms ms)"
	check "$(cat "$T/keep.json" "$T/keep.csv")" "old
old" "timeline SIGTERM ($args): existing results kept"
	no_tmp "timeline SIGTERM ($args)"
done

# --- distinct: no output replaces an input or another output ----------------

expect_error "$T/t.mtr: --json is the same file as the trace $T/t.mtr; a result may not replace an input" \
	"$MMUSIM" run -q "$T/t.mtr" --json "$T/t.mtr"
check "$(cmp "$T/t.mtr" "$T/t0.mtr" && echo kept)" kept "distinct run T --json T: trace kept"
# (each case starts from the whole trace, so that one failing does not fail the next)
restore() { cp "$T/t0.mtr" "$T/t.mtr"; cp "$T/s0.yaml" "$T/s.yaml" 2>/dev/null; }
restore
ln -s t.mtr "$T/link.json"
expect_error "$T/link.json: --vmas-csv is the same file as the trace $T/t.mtr; a result may not replace an input" \
	"$MMUSIM" run -q "$T/t.mtr" --vmas-csv "$T/link.json"
restore
ln "$T/t.mtr" "$T/hard.csv"
expect_error "$T/hard.csv: --timeline is the same file as the trace $T/t.mtr; a result may not replace an input" \
	"$MMUSIM" run -q "$T/t.mtr" --timeline "$T/hard.csv"
rm -f "$T/hard.csv"
restore
printf 'os:\n  mode: thp\n' >"$T/c.yaml"
expect_error "$T/c.yaml: --steps is the same file as the config $T/c.yaml; a result may not replace an input" \
	"$MMUSIM" run -q -c "$T/c.yaml" --steps "$T/c.yaml"
# two outputs, one new file (also through another spelling of the path)
expect_error "$T/./x: --timeline is the same file as --json $T/x; one result would replace the other" \
	"$MMUSIM" run -q --json "$T/x" --timeline "$T/./x"
check "$(ls "$T" | grep -c '^x')" 0 "distinct --json X --timeline X: nothing written"
expect_error "-: --timeline writes standard output, as --json - does; send one of them to a file" \
	"$MMUSIM" run -q --json - --timeline -
expect_error "/dev/stdout: --vmas-csv writes standard output, as --json - does; send one of them to a file" \
	"$MMUSIM" run -q --json - --vmas-csv /dev/stdout
"$MMUSIM" run -q -w stream:size=1M --json /dev/null --timeline /dev/null
check "$?" 0 "distinct /dev/null twice: allowed"

expect_error "$T/t.mtr: -o is the same file as the trace $T/t.mtr; a result may not replace an input" \
	"$MMUSIM" mrc "$T/t.mtr" -o "$T/t.mtr"
check "$(cmp "$T/t.mtr" "$T/t0.mtr" && echo kept)" kept "distinct mrc T -o T: trace kept"
restore
expect_error "$T/t.mtr: OUT is the same file as the trace $T/t.mtr; a result may not replace an input" \
	"$MMUSIM" trace convert "$T/t.mtr" "$T/t.mtr"
restore

printf 'workload: stream:size=1M\nsweep:\n  os.mode: [base, thp, hugetlbfs]\n' >"$T/s.yaml"
cp "$T/s.yaml" "$T/s0.yaml"
expect_error "$T/s.yaml: -o is the same file as the sweep file $T/s.yaml; a result may not replace an input" \
	"$MMUSIM" sweep "$T/s.yaml" -o "$T/s.yaml"
check "$(cmp "$T/s.yaml" "$T/s0.yaml" && echo kept)" kept "distinct sweep s.yaml -o s.yaml: sweep file kept"
restore
rm -rf "$T"/s.yaml.d

# merge with OUT forgotten wrote the CSV over the first report and exited 0
"$MMUSIM" sweep "$T/s.yaml" -o "$T/s.csv" -q || bad "sweep for merge"
set -- "$T"/s.csv.d/point-*.json
cp "$1" "$T/first.json"
expect_error "mmusim: merge: '$1' is a JSON report, not the CSV to write: the OUT operand is missing (mmusim merge OUT.csv RESULT.json...)" \
	"$MMUSIM" merge "$@"
check "$(cmp "$1" "$T/first.json" && echo kept)" kept "distinct merge REPORTS: first report kept"
cp "$T/first.json" "$1"
check "$(grep -c '"points": "3"' "$1")" 1 "distinct: a point's report carries run.labels.points"
expect_error "$T/s.csv: OUT is the same file as the report $T/s.csv; a result may not replace an input" \
	"$MMUSIM" merge "$T/s.csv" "$T/s.csv" "$@"
# gaps: points 0 and 2 of 3
"$MMUSIM" merge "$T/m.csv" "$1" "$3" 2>"$T/err"
check "$?" 0 "distinct merge with a gap: exit"
check "$(cat "$T/err")" "merge: warning: no report for 1 of the sweep's 3 points (the first: point 1); the CSV has gaps" \
	"distinct merge with a gap: the warning"
check "$(cut -d, -f1,2 "$T/m.csv")" "point,os.mode
0,base
2,hugetlbfs" "distinct merge with a gap: rows (no points column)"
"$MMUSIM" merge "$T/m.csv" "$@" 2>"$T/err"
check "$(cat "$T/err")" "" "distinct merge of every point: no warning"
expect_error "$T/m.csv: -o is the same file as the CSV $T/m.csv; a result may not replace an input" \
	"$MMUSIM" plot "$T/m.csv" -x os.mode -y refs.load -o "$T/m.csv"

# --- upfront: every output opened before the work ----------------------------

# --json to no directory failed after the whole run: the timeline was written by then
expect_error "$T/nodir/x.json: No such file or directory" \
	"$MMUSIM" run -q "$T/t.mtr" --timeline "$T/u.csv" --json "$T/nodir/x.json"
check "$(ls "$T" | grep -c '^u\.csv')" 0 "upfront --json nodir: no timeline written"
expect_error "$T/nodir/x.csv: No such file or directory" \
	"$MMUSIM" run -q "$T/t.mtr" --json "$T/u.json" --vmas-csv "$T/nodir/x.csv"
check "$(ls "$T" | grep -c '^u\.json')" 0 "upfront --vmas-csv nodir: no report written"

# a run that fails after its outputs were opened: no partial file, the old ones kept
head -c 300000 "$T/t.mtr" >"$T/cut.mtr"
echo old >"$T/keep.json"
echo old >"$T/keep.csv"
expect_error "$T/cut.mtr: truncated mtr trace at byte 300000" \
	"$MMUSIM" run -q "$T/cut.mtr" --json "$T/keep.json" --timeline "$T/keep.csv" --steps "$T/new.csv"
check "$(cat "$T/keep.json" "$T/keep.csv")" "old
old" "upfront failed run: existing results kept"
check "$(ls "$T" | grep -c '^new\.csv')" 0 "upfront failed run: no new file"
no_tmp "upfront failed run"

# permission errors are exit 2 from every command (sweep gave 1); root runs them as nobody
as_user() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
cp "$MMUSIM" "$T/mmusim"
mkdir "$T/ro"
chmod 755 "$T" "$T/mmusim"
chmod 555 "$T/ro"
chmod 644 "$T/s.yaml" "$T/t.mtr"
as_user "$T/mmusim" sweep "$T/s.yaml" -o "$T/ro/x.csv" -q >"$T/out" 2>"$T/err"
check "$?" 2 "upfront sweep, no permission: exit"
check "$(cat "$T/err")" "$T/ro/x.csv.d: Permission denied" "upfront sweep, no permission: message"
as_user "$T/mmusim" sweep "$T/s.yaml" -o "$T/ro/x.csv" --outdir "$T/ro/d" -q >"$T/out" 2>"$T/err"
check "$?" 2 "upfront sweep --outdir, no permission: exit"
for cmd in "run -q $T/t.mtr --json $T/ro/x.json" "run -q $T/t.mtr --vmas-csv $T/ro/x.csv" \
	"mrc $T/t.mtr -o $T/ro/x.csv" "merge $T/ro/x.csv $1" "trace convert $T/t.mtr $T/ro/x.mtr"; do
	as_user "$T/mmusim" $cmd >"$T/out" 2>"$T/err"
	check "$?" 2 "upfront $cmd, no permission: exit"
	check "$(grep -c 'Permission denied' "$T/err")" 1 "upfront $cmd, no permission: message"
done

echo "  e2e_outputs: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
