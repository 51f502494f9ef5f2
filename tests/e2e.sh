#!/bin/bash
# End-to-end tests of the mmusim command line. Run from the repository root by
# tests/run.sh (make check) with MMUSIM set to the binary under test. Each check
# prints "ok"/"FAIL" and the script exits non-zero if any failed.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
VAL=tests/validation/small.lackey.zst
. tests/e2e_lib.sh

# --- one trace, three ways in: lackey .zst, mtr, stdin --------------------------------
$MMUSIM run -c configs/skylake.yaml $VAL --json "$T/a.json" --quiet || bad "run lackey.zst"
$MMUSIM trace convert $VAL "$T/v.mtr" || bad "trace convert"
$MMUSIM run -c configs/skylake.yaml "$T/v.mtr" --json "$T/b.json" --quiet || bad "run mtr"
zstd -dc $VAL | $MMUSIM run -c configs/skylake.yaml - --json "$T/c.json" --quiet || bad "run stdin"
$MMUSIM trace convert "$T/v.mtr" "$T/v2.mtr.zst" || bad "convert mtr to mtr.zst"
$MMUSIM run -c configs/skylake.yaml "$T/v2.mtr.zst" --json "$T/d.json" --quiet || bad "run mtr.zst"
for f in b c d; do
	# the trace and format lines differ by design; every counter must not
	diff <(strip <"$T/a.json" | grep -v -e '"trace"' -e '"format"' -e '"input_id"') \
	     <(strip <"$T/$f.json" | grep -v -e '"trace"' -e '"format"' -e '"input_id"') >/dev/null 2>&1 \
		&& ok || bad "report $f differs from the lackey run"
done 2>/dev/null
check "$(field "$T/a.json" l1i misses)" 127 "skylake L1I misses (DynamoRIO skylake-lru row)"
check "$(field "$T/a.json" stlb misses)" 284 "skylake STLB misses"
check "$(field "$T/a.json" walk walks)" 284 "walks equal STLB misses"
check "$(field "$T/a.json" refs ifetch)" 4440866 "ifetch count"

# --- determinism ---------------------------------------------------------------------
$MMUSIM run -w gups:size=8M,updates=100000 --json "$T/g1.json" --quiet
$MMUSIM run -w gups:size=8M,updates=100000 --json "$T/g2.json" --quiet
if [ -s "$T/g1.json" ] && cmp -s <(strip <"$T/g1.json") <(strip <"$T/g2.json"); then ok; else bad "same seed, different JSON"; fi
$MMUSIM run -w gups:size=8M,updates=100000,seed=9 --json "$T/g3.json" --quiet
if [ -s "$T/g3.json" ] && ! cmp -s <(strip <"$T/g1.json") <(strip <"$T/g3.json"); then ok; else bad "seed= changes nothing"; fi

# --- golden reports of the tiny committed traces ------------------------------------
for g in tests/golden/*.lackey; do
	want="${g%.lackey}.json"
	$MMUSIM run -c configs/nehalem.yaml "$g" --modes base,hugetlbfs,thp --json - 2>"$T/err" | strip >"$T/got.json"
	if [ ! -s "$want" ]; then bad "missing golden $want (make golden-update)"; continue; fi
	if diff -u "$want" "$T/got.json" >"$T/diff"; then ok; else bad "golden $g"; head -40 "$T/diff"; fi
done

# --- --modes, trace gen, trace info, config show -------------------------------------
$MMUSIM run -w stream:size=4M,iterations=1 --modes base,hugetlbfs,thp --json "$T/m.json" --quiet || bad "--modes"
grep -q '^  "hugetlbfs": {' "$T/m.json" && ok || bad "--modes JSON keyed by mode"
check "$(awk '/"hugetlbfs": \{/ { h = 1 } h && /"nr_hugetlb_pages"/ { gsub(/,/, "", $2); print $2; exit }' "$T/m.json")" 6 \
	"three 4 MiB STREAM arrays, 2M-aligned: 6 hugetlbfs pages"
$MMUSIM trace gen -w stream:size=64K,iterations=1 -o "$T/s.mtr" || bad "trace gen"
$MMUSIM trace info "$T/s.mtr" >"$T/info" || bad "trace info"
grep -q 'records:      0 ifetch, 16384 load, 32768 store, 0 modify, 3 events' "$T/info" && ok ||
	bad "trace info counts: $(grep records "$T/info")"
grep -q 'pages:        48 distinct' "$T/info" && ok || bad "trace info pages: $(grep pages "$T/info")"
# a generated trace replays as the workload itself: same seed (the default config's), same counters
$MMUSIM trace gen -w gups:size=1M,updates=20000 -o "$T/g.mtr" || bad "trace gen gups"
$MMUSIM run "$T/g.mtr" --json "$T/gm.json" --quiet || bad "run of a generated trace"
$MMUSIM run -w gups:size=1M,updates=20000 --json "$T/gw.json" --quiet || bad "run -w gups"
diff <(strip <"$T/gm.json" | grep -v -e '"trace"' -e '"format"' -e '"input_id"') \
     <(strip <"$T/gw.json" | grep -v -e '"trace"' -e '"format"' -e '"input_id"') >/dev/null && ok ||
	bad "trace gen's trace and its workload give different counters"
for c in configs/*.yaml; do
	$MMUSIM config show -c "$c" >"$T/show1.yaml" || bad "config show $c"
	$MMUSIM config show -c "$T/show1.yaml" >"$T/show2.yaml" || bad "config show of its own output ($c)"
	cmp -s "$T/show1.yaml" "$T/show2.yaml" && ok || bad "config show round trip $c"
done
# integers are decimal or 0x hex, never octal: 032 is thirty-two
check "$($MMUSIM config show --set tlb.l1d.4K.entries=032 | grep -c '4K: { entries: 32,')" 1 "032 is decimal"
check "$($MMUSIM run -w gups:size=1M,updates=0x10 --json - --quiet | grep -c '"modify": 16,')" 1 "0x10 is hex"

# --- timeline ------------------------------------------------------------------------
$MMUSIM run -w stream:size=8M,iterations=1 --set os.mode=thp --timeline "$T/tl.csv" --timeline-ms 2 --quiet \
	--json "$T/tl.json" --vmas-csv "$T/tlv.csv" || bad "--timeline"
# every row of the CSVs a run writes ends with its provenance, as its JSON report has it
# (the input id, a workload spec with a comma, is a quoted field)
prov="$(sed -n 's/.*"\(version\|build_id\|config_hash\)": "\([^"]*\)".*/\2/p' "$T/tl.json" | paste -sd,),\"workload:stream:size=8M,iterations=1\""
for f in tl tlv; do
	check "$(head -1 "$T/$f.csv" | awk -F, '{ print $(NF - 3) "," $(NF - 2) "," $(NF - 1) "," $NF }')" \
		"run.version,run.build_id,run.config_hash,run.input_id" "$f.csv: provenance columns"
	check "$(tail -1 "$T/$f.csv" | sed 's/.*,\([^,]*,[^,]*,[^,]*,"[^"]*"\)$/\1/')" "$prov" "$f.csv: a row's provenance"
done
head -1 "$T/tl.csv" | grep -q '^mode,time_ms,cycles,rss_bytes,huge_bytes,huge_coverage,free_order0,' && ok ||
	bad "timeline header: $(head -1 "$T/tl.csv")"
[ "$(wc -l <"$T/tl.csv")" -ge 3 ] && ok || bad "timeline has $(wc -l <"$T/tl.csv") lines"
# STREAM's three 8M arrays are THP-backed from their first faults: coverage 1 in every row
[ "$(awk -F, 'NR > 1 && $6 != "1.000000"' "$T/tl.csv" | wc -l)" -eq 0 ] && ok || bad "timeline coverage"

# --- capture: a real program, replayed with its mappings ------------------------------
if $MMUSIM capture -o "$T/true.lackey.zst" -- /bin/true; then
	$MMUSIM trace info "$T/true.lackey.zst" >"$T/tinfo" || bad "trace info of a capture"
	grep -Eq 'events:       mmap [1-9][0-9]* munmap [0-9]+ mprotect [0-9]+ madvise [0-9]+ brk [1-9]' "$T/tinfo" &&
		ok || bad "capture has no mmap/brk events: $(grep events "$T/tinfo")"
	$MMUSIM run "$T/true.lackey.zst" --modes base,thp --quiet --json "$T/cap.json" || bad "replay a capture"
else
	bad "mmusim capture -- /bin/true"
fi
$MMUSIM capture -o "$T/false.zst" -- /bin/false 2>"$T/err"
[ $? -eq 1 ] && grep -q 'capture: /bin/false exited with status 1' "$T/err" && [ ! -e "$T/false.zst" ] &&
	ok || bad "a failing capture: $(cat "$T/err")"

# --- sweeps: -j 1, -j 2 and --list + GNU parallel + merge give one CSV; resume -------
mkdir -p "$T/sw"
cat >"$T/sw/s.yaml" <<'EOS'
# a 3x2 sweep
workload: stream:size=4M,iterations=1
sweep:
  tlb.l1d.4K.entries: [32, 64, 128]
  os.mode: [base, thp]
EOS
$MMUSIM sweep "$T/sw/s.yaml" -j 1 -o "$T/sw/j1.csv" --quiet || bad "sweep -j 1"
$MMUSIM sweep "$T/sw/s.yaml" -j 2 -o "$T/sw/j2.csv" --quiet || bad "sweep -j 2"
check "$(wc -l <"$T/sw/j1.csv")" 7 "sweep CSV rows (header + 6 points)"
check "$(cut -d, -f1-3 "$T/sw/j1.csv" | tr '\n' ' ')" \
	"point,tlb.l1d.4K.entries,os.mode 0,32,base 1,32,thp 2,64,base 3,64,thp 4,128,base 5,128,thp " \
	"sweep columns and point order"
check "$(head -1 "$T/sw/j1.csv" | tr ',' '\n' | tail -4 | tr '\n' ' ')" \
	"run.version run.build_id run.config_hash run.input_id " "sweep CSV provenance columns"
# each row's provenance is its report's: point 0 (32 entries, base) against point 2 (64, base)
for p in 0 2; do
	f=$(ls "$T/sw/j1.csv.d"/point-00000$p-*.json)
	want="$(sed -n 's/.*"version": "\([^"]*\)".*/\1/p; s/.*"build_id": "\([^"]*\)".*/\1/p;
		   s/.*"config_hash": "\([^"]*\)".*/\1/p' "$f" | tr '\n' ',')"
	# (the input_id, last, is a quoted field with a comma in it: dropped first)
	got="$(sed 's/,"[^"]*"$//' "$T/sw/j1.csv" |
		awk -F, -v p=$p 'NR == p + 2 { print $(NF - 2) "," $(NF - 1) "," $NF "," }')"
	check "$got" "$want" "sweep CSV row $p provenance = its report's"
done
[ "$(sed 's/,"[^"]*"$//' "$T/sw/j1.csv" | awk -F, 'NR == 2 { print $NF }')" != \
  "$(sed 's/,"[^"]*"$//' "$T/sw/j1.csv" | awk -F, 'NR == 4 { print $NF }')" ] && ok ||
	bad "sweep CSV: points of different configs share a config_hash"
check "$(tail -1 "$T/sw/j1.csv" | sed 's/.*,"\([^"]*\)"$/\1/')" "workload:stream:size=4M,iterations=1" \
	"sweep CSV input_id"
cmp -s "$T/sw/j1.csv" "$T/sw/j2.csv" && ok || bad "sweep -j 1 and -j 2 differ"
$MMUSIM sweep "$T/sw/s.yaml" --list --outdir "$T/sw/par" >"$T/sw/cmds" || bad "sweep --list"
check "$(wc -l <"$T/sw/cmds")" 6 "one command per point"
sed "s|^mmusim |$MMUSIM |" "$T/sw/cmds" | parallel -j 2 || bad "GNU parallel over the commands"
$MMUSIM merge "$T/sw/par.csv" "$T/sw/par"/*.json || bad "merge"
# a point simulated beside others from one decode reports what its own run reports
cmp -s <(strip <"$T"/sw/par/point-000003-*.json) <(strip <"$T"/sw/j2.csv.d/point-000003-*.json) &&
	ok || bad "a sweep worker's report differs from the point's own mmusim run"
cmp -s "$T/sw/j1.csv" "$T/sw/par.csv" && ok || bad "list + parallel + merge differs from sweep -j 1"
# plots of a sweep: lines to SVG, % change bars to PNG, the mail's table, sweep --plot
$MMUSIM plot "$T/sw/j1.csv" -x tlb.l1d.4K.entries -y walk.walks --by os.mode --logx -o "$T/sw/l.svg" >/dev/null &&
	grep -q '<svg' "$T/sw/l.svg" && ok || bad "plot lines to svg"
$MMUSIM plot "$T/sw/j1.csv" -x tlb.l1d.4K.entries -y cycles.total --by os.mode --kind bars -o "$T/sw/b.png" >/dev/null &&
	[ "$(head -c 4 "$T/sw/b.png" | tail -c 3)" = PNG ] && ok || bad "plot bars to png"
check "$($MMUSIM plot "$T/sw/j1.csv" -x tlb.l1d.4K.entries -y walk.walks --by os.mode --kind bars --table | sed -n 2p | tr -s ' ')" \
	"L1 dTLB 4K entries base thp" "plot --table header"
$MMUSIM sweep "$T/sw/s.yaml" -o "$T/sw/j1.csv" --plot "$T/sw/s.png" --quiet && [ -s "$T/sw/s.png" ] && ok || bad "sweep --plot"
expect_error "$T/sw/j1.csv: no column 'walk.walkz'" $MMUSIM plot "$T/sw/j1.csv" -x tlb.l1d.4K.entries -y walk.walkz -o "$T/sw/x.png"
[ -e "$T/sw/x.png" ] && bad "a failed plot left its image" || ok
# a sweep that lost two points resumes with those only, and gives the same CSV
rm "$T"/sw/j1.csv.d/point-000001-*.json "$T"/sw/j1.csv.d/point-000004-*.json "$T/sw/j1.csv"
$MMUSIM sweep "$T/sw/s.yaml" -j 2 -o "$T/sw/j1.csv" 2>"$T/sw/err" || bad "resumed sweep"
grep -q 'sweep: 4 of 6 points reused from' "$T/sw/err" && ok || bad "resume message: $(head -1 "$T/sw/err")"
cmp -s "$T/sw/j2.csv" "$T/sw/j1.csv" && ok || bad "resumed sweep's CSV differs"
# an edited sweep file does not reuse the results of points it changed
sed 's/\[32, 64, 128\]/[32, 64, 256]/' "$T/sw/s.yaml" >"$T/sw/s2.yaml"
$MMUSIM sweep "$T/sw/s2.yaml" -o "$T/sw/j1.csv" --outdir "$T/sw/j1.csv.d" 2>"$T/sw/err" || bad "edited sweep"
grep -q 'sweep: 4 of 6 points reused from' "$T/sw/err" && ok || bad "edited sweep reused: $(head -1 "$T/sw/err")"
check "$(cut -d, -f2 "$T/sw/j1.csv" | tail -2 | tr '\n' ' ')" "256 256 " "edited sweep's new points"
# SIGINT stops a sweep with no CSV; running it again finishes it
cat >"$T/sw/slow.yaml" <<'EOS'
workload: gups:size=64M,updates=8000000
sweep:
  tlb.l1d.4K.entries: [16, 32, 64, 128]
EOS
$MMUSIM sweep "$T/sw/slow.yaml" -j 1 -o "$T/sw/slow.csv" --quiet &
spid=$!
sleep 1
kill -INT $spid
wait $spid
check "$?" 130 "interrupted sweep's exit status"
[ -e "$T/sw/slow.csv" ] && bad "an interrupted sweep wrote its CSV" || ok
ls "$T/sw/slow.csv.d" | grep -q tmp && bad "an interrupted sweep left a temporary" || ok
# ^C at a terminal reaches the whole process group, workers too: interrupted, no worker
# "failed" (setsid: a group of its own, so that the signal spares this script)
setsid $MMUSIM sweep "$T/sw/slow.yaml" -j 2 -o "$T/sw/slowg.csv" 2>"$T/sw/slowg.err" &
spid=$!
# (a script's background job starts with SIGINT ignored until mmusim sets its handler:
#  signal once the sweep has made its point directory, so it is surely running)
for i in $(seq 200); do [ -d "$T/sw/slowg.csv.d" ] && break; sleep 0.1; done
sleep 0.5
kill -INT -- -$spid
wait $spid
check "$?" 130 "sweep interrupted with its workers: exit status"
grep -q 'failed' "$T/sw/slowg.err" && bad "an interrupted sweep reported a worker failure: $(cat "$T/sw/slowg.err")" || ok
check "$(grep -v '^sweep: [0-9]' "$T/sw/slowg.err" | grep -c .):$(grep -c 'sweep interrupted' "$T/sw/slowg.err")" \
	"1:1" "an interrupted sweep: one message, the sweep's (workers say nothing)"
$MMUSIM sweep "$T/sw/slow.yaml" -j 2 -o "$T/sw/slow.csv" --quiet && [ "$(wc -l <"$T/sw/slow.csv")" = 5 ] &&
	ok || bad "the interrupted sweep did not finish on a second run"
# repeat: mean and 95% confidence half-width per counter
printf 'workload: gups:size=4M,updates=20000\nrepeat: 3\nsweep:\n  os.mode: [base, thp]\n' >"$T/sw/rep.yaml"
$MMUSIM sweep "$T/sw/rep.yaml" -o "$T/sw/rep.csv" --quiet || bad "sweep with repeat"
head -1 "$T/sw/rep.csv" | grep -q ',walk.walks,walk.walks.ci95,' && ok || bad "repeat: no .ci95 columns"
check "$(ls "$T/sw/rep.csv.d" | wc -l)" 6 "repeat: one report per point and seed"
# bad sweep files
printf 'workload: stream:size=1M\nsweep:\n  tlb.l1d.4K.entries: [32, 6x]\n' >"$T/sw/bad1.yaml"
expect_error "$T/sw/bad1.yaml:3:28: tlb.l1d.4K.entries: expected an integer" $MMUSIM sweep "$T/sw/bad1.yaml" --quiet
printf 'workload: stream:size=1M\nswep:\n  os.mode: [base]\n' >"$T/sw/bad2.yaml"
expect_error "$T/sw/bad2.yaml:2:1: unknown key 'swep'" $MMUSIM sweep "$T/sw/bad2.yaml" --quiet
printf 'workload: stream:size=1M\nsweep:\n  os.mode: []\n' >"$T/sw/bad3.yaml"
expect_error "$T/sw/bad3.yaml:3:12: os.mode: empty list" $MMUSIM sweep "$T/sw/bad3.yaml" --quiet
printf 'workload: stream:size=1M\nsweep:\n  tlb.l1d.4K.ways: [3]\n' >"$T/sw/bad4.yaml"
expect_error "$T/sw/bad4.yaml:" $MMUSIM sweep "$T/sw/bad4.yaml" --quiet

# --- result files: devices, FIFOs, symlinks and directories are never replaced ---------
# Each writer, to: a regular file (the reference), a character device made with mknod
# (/dev/null's 1,3: stays a device; /dev/full's 1,7: the bytes really go to the device,
# whose ENOSPC is an error naming the path), a FIFO (its reader gets the whole result), a
# symlink (stays a link, its target holds the result) and a directory (exit 2).
O="$T/outputs"
mkdir -p "$O/tmpd"
printf 'tlb: { stlb: { entries: 64, ways: 4 } }\n' >"$O/m.yaml"
printf 'config: m.yaml\ntrace: %s/tests/golden/mixed.lackey\nsweep:\n  tlb.l1d.4K.entries: [8, 16]\n' \
	"$PWD" >"$O/s.yaml"
$MMUSIM sweep "$O/s.yaml" --outdir "$O/pts" -o "$O/pts.csv" --quiet
w_json() { $MMUSIM run -w gups:size=1M,updates=2000 --json "$1" --quiet; }
w_timeline() { $MMUSIM run -w stream:size=4M,iterations=1 --timeline "$1" --timeline-ms 0.1 --quiet; }
w_convert() { $MMUSIM trace convert tests/golden/mixed.lackey "$1"; }
w_gen() { $MMUSIM trace gen -w stream:size=64K,iterations=1 -o "$1"; }
w_capture() { $MMUSIM capture -o "$1" -- /bin/true; }
w_sweep() { TMPDIR="$O/tmpd" $MMUSIM sweep "$O/s.yaml" -o "$1" --quiet; }
w_merge() { $MMUSIM merge "$1" "$O/pts"/point-*.json; }
w_plot() { $MMUSIM plot tests/data/plot_sizes.csv -x cache.llc.size -y walk.cycles -o "$1" >/dev/null; }
# what must match between the reference and a copy received elsewhere
same_out() { # WRITER REFERENCE OTHER
	case $1 in
	json) cmp -s <(strip <"$2") <(strip <"$3") ;;
	capture) $MMUSIM trace info "$3" >/dev/null 2>&1 ;;
	plot) [ "$(head -c 4 "$3" | od -An -c | tr -d ' ')" = '211PNG' ] ;;
	*) cmp -s "$2" "$3" ;;
	esac
}
command -v valgrind >/dev/null 2>&1 || echo "    (no valgrind: capture's outputs not checked)"
for w in json:json timeline:csv convert:mtr gen:mtr capture:lackey sweep:csv merge:csv plot:png; do
	name=${w%%:*} ext=${w##*:}
	[ "$name" = capture ] && ! command -v valgrind >/dev/null 2>&1 && continue
	d="$O/$name"
	mkdir -p "$d"
	"w_$name" "$d/ref.$ext" 2>>"$d/log" || bad "$name: to a regular file"
	[ -f "$d/ref.$ext" ] && [ -s "$d/ref.$ext" ] || { bad "$name: no reference output"; continue; }
	mknod "$d/null.$ext" c 1 3 && mknod "$d/full.$ext" c 1 7 || { bad "mknod"; continue; }
	"w_$name" "$d/null.$ext" 2>>"$d/log" && ok || bad "$name: to a character device: exit $?"
	[ -c "$d/null.$ext" ] && ok || bad "$name: the character device was replaced"
	"w_$name" "$d/full.$ext" 2>"$d/err" && bad "$name: a failed write to /dev/full exited 0"
	[ -c "$d/full.$ext" ] && grep -q "full.$ext: .*No space left on device" "$d/err" && ok ||
		bad "$name: /dev/full: $(cat "$d/err")"
	mkfifo "$d/fifo.$ext"
	cat "$d/fifo.$ext" >"$d/received" &
	"w_$name" "$d/fifo.$ext" 2>>"$d/log" || bad "$name: to a FIFO"
	wait $!
	[ -p "$d/fifo.$ext" ] && same_out "$name" "$d/ref.$ext" "$d/received" && ok ||
		bad "$name: the FIFO's reader did not get the result"
	ln -s sub/target.$ext "$d/link.$ext"
	mkdir "$d/sub"
	"w_$name" "$d/link.$ext" 2>>"$d/log" || bad "$name: to a symlink"
	[ -L "$d/link.$ext" ] && [ -f "$d/sub/target.$ext" ] && same_out "$name" "$d/ref.$ext" "$d/sub/target.$ext" &&
		ok || bad "$name: the symlink or its target"
	mkdir "$d/dir.$ext"
	expect_error "$d/dir.$ext: Is a directory" "w_$name" "$d/dir.$ext"
	# nothing else appeared: no temporaries, no OUT.d next to a device
	# (a sweep's points go next to a regular -o: link.csv.d, ref.csv.d)
	check "$(cd "$d" && ls | grep -v -e '^ref\.' -e '^err$' -e '^log$' -e '^received$' -e '^link\.csv\.d$' |
		sort | tr '\n' ' ')" \
		"dir.$ext fifo.$ext full.$ext link.$ext null.$ext sub " "$name: files left beside the outputs"
done
check "$(ls "$O/tmpd" | wc -l)" 0 "sweep -o DEVICE: its temporary point directory is removed"
# standard output by name: the descriptor itself (a >> redirection keeps what it had)
ln -s /proc/self/fd/1 "$O/stdout.json"
echo before >"$O/appended"
$MMUSIM run tests/golden/mixed.lackey --json "$O/stdout.json" --quiet >>"$O/appended"
[ -L "$O/stdout.json" ] && [ "$(head -1 "$O/appended")" = before ] && grep -q '"pgfault"' "$O/appended" &&
	ok || bad "--json through a link to /proc/self/fd/1"
$MMUSIM run tests/golden/mixed.lackey --json /dev/stdout --quiet | grep -q '"pgfault"' && [ -L /dev/stdout ] &&
	ok || bad "--json /dev/stdout"
expect_error "sweep: -o '/dev/null' is not a regular file; give --outdir" \
	$MMUSIM sweep "$O/s.yaml" -o /dev/null --list

# a FIFO nobody reads: opening it blocks, and ^C still ends the run (130, nothing replaced)
mkfifo "$O/unread.json"
$MMUSIM run tests/golden/mixed.lackey --json "$O/unread.json" --quiet 2>/dev/null &
fpid=$!
sleep 1
kill -INT $fpid
wait $fpid
check "$?" 130 "an interrupted run blocked on a FIFO with no reader"
[ -p "$O/unread.json" ] && ok || bad "the unread FIFO was replaced"
# a trace from a FIFO: identified as a stream (never opened twice: that would block)
mkfifo "$O/in.lackey"
cat tests/golden/mixed.lackey >"$O/in.lackey" &
timeout 20 $MMUSIM run "$O/in.lackey" --format lackey --json "$O/fifo-in.json" --quiet ||
	bad "a trace read from a FIFO"
grep -q '"input_id": "stream,format=lackey"' "$O/fifo-in.json" && ok || bad "a FIFO's input_id"

# --- resumed sweeps: a point is reused only under the same config, input and build ----
R="$T/resume"
mkdir -p "$R"
cp $VAL "$R/a.lackey.zst"
cp tests/data/syscalls.lackey "$R/b.lackey"
printf 'tlb: { stlb: { entries: 512, ways: 4 }, l1d: { 4K: { entries: 64, ways: 4 } } }\n' >"$R/m.yaml"
printf 'config: m.yaml\ntrace: [a.lackey.zst, b.lackey]\nsweep:\n  tlb.l1d.4K.entries: [4, 8]\n' >"$R/s.yaml"
resume() { $MMUSIM sweep "$R/s.yaml" -o "$R/s.csv" 2>&1 >/dev/null | grep 'reused' || echo "none reused"; }
resume >/dev/null
cp "$R/s.csv" "$R/first.csv"
check "$(resume)" "sweep: 4 of 4 points reused from $R/s.csv.d" "an unchanged sweep reuses every point"
cmp -s "$R/s.csv" "$R/first.csv" && ok || bad "a fully reused sweep's CSV changed"
# a base-config key that every point overrides changes no point
sed -i 's/4K: { entries: 64/4K: { entries: 32/' "$R/m.yaml"
check "$(resume)" "sweep: 4 of 4 points reused from $R/s.csv.d" "a change the points override"
sed -i 's/entries: 512/entries: 16/' "$R/m.yaml"
check "$(resume)" "sweep: 0 of 4 points reused from $R/s.csv.d; 4 rerun (their config, input or mmusim build changed)" \
	"the base config changed"
[ "$(cut -d, -f1-2,18- "$R/s.csv")" != "$(cut -d, -f1-2,18- "$R/first.csv")" ] && ok ||
	bad "a 16-entry STLB gave the 512-entry numbers (stale points reused)"
echo ' L 200000,8' >>"$R/b.lackey"
check "$(resume)" "sweep: 2 of 4 points reused from $R/s.csv.d; 2 rerun (their config, input or mmusim build changed)" \
	"one of two traces changed"
objcopy --remove-section=.note.gnu.build-id "$MMUSIM" "$R/mmusim-other" 2>/dev/null ||
	cp "$MMUSIM" "$R/mmusim-other" # (no objcopy: the check below then fails)
"$R/mmusim-other" sweep "$R/s.yaml" -o "$R/s.csv" 2>"$R/err" >/dev/null
grep -q "0 of 4 points reused.*4 rerun" "$R/err" && ok || bad "another build reused points: $(cat "$R/err")"
grep -q '"build_id": "none"' "$R/s.csv.d"/point-000000-*.json && ok || bad "the other build's id"
check "$(resume)" "sweep: 0 of 4 points reused from $R/s.csv.d; 4 rerun (their config, input or mmusim build changed)" \
	"back to this build"

# --- the bad-input contract ----------------------------------------------------------
printf 'tlb:\n  l1d:\n    4K: { entries: 64, ways: 3 }\n' >"$T/geom.yaml"
expect_error "$T/geom.yaml:3:" $MMUSIM run -c "$T/geom.yaml" $VAL --quiet
printf 'tlb:\n  l1x: 3\n' >"$T/key.yaml"
expect_error "$T/key.yaml:2:3: " $MMUSIM run -c "$T/key.yaml" $VAL --quiet
expect_error "--set" $MMUSIM run --set tlb.nope=3 -w stream:size=1M --quiet
printf 'I  04001000,4\n L 0400zz00,8\n' >"$T/bad.lackey"
expect_error "$T/bad.lackey:2:" $MMUSIM run "$T/bad.lackey" --json "$T/never.json" --quiet
[ -e "$T/never.json" ] && bad "a failed run left its JSON" || ok
ls "$T" | grep -q 'never.json.tmp' && bad "a failed run left a temporary" || ok
expect_error "$T/missing.lackey" $MMUSIM run "$T/missing.lackey" --quiet
expect_error "-w" $MMUSIM run -w nosuch:size=1M --quiet
expect_error "mmusim: unknown option" $MMUSIM run --bogus
head -c 100000 $VAL >"$T/trunc.zst"
expect_error "$T/trunc.zst" $MMUSIM run "$T/trunc.zst" --json "$T/never2.json" --quiet
[ -e "$T/never2.json" ] && bad "a truncated trace left its JSON" || ok

# more of the contract: every malformed input exits 2 naming file:line[:col], never loops
printf ' L 200000000000000,8\n' >"$T/big.lackey"
expect_error "$T/big.lackey:1: address 0x200000000000000 is over 57 bits" $MMUSIM run "$T/big.lackey" --quiet
printf 'I  0400\0000,4\n' >"$T/nul.lackey"
expect_error "$T/nul.lackey:1: " $MMUSIM run "$T/nul.lackey" --quiet
# 3000 fixed pseudo-random bytes, none a newline, the first one fixed (awks differ in their
# generators): from /dev/urandom, a first byte of "\n" or "=" (a line the lackey reader skips)
# made the line-1 check below fail in about 1 run of 128
LC_ALL=C awk 'BEGIN { srand(42); for (i = 0; i < 3000; i++) { c = i ? 11 + int(rand() * 245) : 200; printf "%c", c } }' >"$T/rnd.bin"
expect_error "$T/rnd.bin: cannot detect the trace format" $MMUSIM run "$T/rnd.bin" --quiet
expect_error "$T/rnd.bin:1: " $MMUSIM run --format lackey "$T/rnd.bin" --quiet
expect_error "/dev/zero:1: line longer than 4096 bytes" timeout 20 $MMUSIM run --format lackey /dev/zero --quiet
$MMUSIM trace convert tests/golden/mixed.lackey "$T/m.mtr" && head -c 40 "$T/m.mtr" >"$T/t.mtr"
expect_error "$T/t.mtr: truncated mtr trace at byte 40" $MMUSIM run "$T/t.mtr" --json "$T/never3.json" --quiet
[ -e "$T/never3.json" ] && bad "a truncated mtr trace left its JSON" || ok
expect_error "$T: Is a directory" $MMUSIM run "$T" --quiet
printf 'SYSCALL[7,1](9) sys_mmap ( 0x0, zz\n' >"$T/sc.lackey"
expect_error "$T/sc.lackey:1: bad arguments to sys_mmap" $MMUSIM run "$T/sc.lackey" --quiet
printf 'tlb:\n  l1d:\n    4K: { entries: abc, ways: 4 }\n' >"$T/c1.yaml"
expect_error "$T/c1.yaml:3:11: tlb.l1d.4K.entries: expected an integer, got 'abc'" $MMUSIM run -c "$T/c1.yaml" -w stream:size=1M --quiet
printf 'os:\n  memory: -1G\n' >"$T/c2.yaml"
expect_error "$T/c2.yaml:2:3: os.memory: expected a size" $MMUSIM run -c "$T/c2.yaml" -w stream:size=1M --quiet
printf 'tlb:\n  policy: mru\n' >"$T/c3.yaml"
expect_error "$T/c3.yaml:2:3: tlb.policy: unknown value 'mru'" $MMUSIM run -c "$T/c3.yaml" -w stream:size=1M --quiet
expect_error "--set os.mode=turbo: os.mode: unknown value 'turbo'" $MMUSIM run --set os.mode=turbo -w stream:size=1M --quiet
printf 'tlb:\n  l1d: { 4K: { entries: 64 }\n' >"$T/c7.yaml"
expect_error "$T/c7.yaml:3:1: YAML syntax error" $MMUSIM run -c "$T/c7.yaml" -w stream:size=1M --quiet
printf 'tlb: &x { policy: lru }\nwalk: *x\n' >"$T/c8.yaml"
expect_error "$T/c8.yaml:2:7: YAML aliases (*x) are not supported" $MMUSIM run -c "$T/c8.yaml" -w stream:size=1M --quiet
printf 'workload: stream:size=1M\nsweep:\n  os.mode: &a [base, thp]\n  tlb.policy: &b [*a, *a, *a]\n  seed: [*b, *b, *b]\n' >"$T/s6.yaml"
expect_error "$T/s6.yaml:3:12: tlb.policy: list items must be plain values" timeout 20 $MMUSIM sweep "$T/s6.yaml" --quiet
printf 'tlb:\n  l1d:\n    4K: { entries: 2, ways: 4 }\n' >"$T/c6.yaml"
expect_error "$T/c6.yaml:3:23: tlb.l1d.4K.ways: 4 exceeds entries 2" $MMUSIM run -c "$T/c6.yaml" -w stream:size=1M --quiet
expect_error "-w: stream: unknown parameter 'bogus'" $MMUSIM run -w stream:bogus=1 --quiet
# bounds: 4 GiB touched one page per MiB over a 1 TiB range stays under 1 GiB of host memory
$MMUSIM run -w stride:size=1T,stride=1M,passes=1 --set os.memory=8G --json "$T/tib.json" --quiet || bad "1 TiB stride run"
check "$(field "$T/tib.json" vmstat pgfault)" 1048576 "1 TiB stride: pages touched"
rss=$(field "$T/tib.json" run max_rss_bytes)
[ -n "$rss" ] && [ "$rss" -lt $((1 << 30)) ] && ok || bad "1 TiB stride run used $rss bytes of host memory (limit 1 GiB)"
# out of simulated memory with no swap: a clean error naming the record, no report
expect_error "stream:size=64M,iterations=1: record " $MMUSIM run -w stream:size=64M,iterations=1 \
	--set os.memory=64M --set os.swap.size=0 --json "$T/oom.json" --quiet
grep -q 'simulated memory (os.memory = 64 MiB) is exhausted' "$T/err" && [ ! -e "$T/oom.json" ] && ok ||
	bad "out of memory: $(cat "$T/err")"
# out of HOST memory (100 MB of address space for 4 GiB touched over 1 TiB): a failure of the
# host, not bad input: exit 1, a message saying so, no report (not under ASan, whose shadow
# memory needs terabytes of address space)
if ! grep -q __asan_init "$MMUSIM"; then
	(ulimit -v 100000; exec $MMUSIM run -w stride:size=1T,stride=1M --set os.memory=8G \
		--json "$T/hoom.json" --quiet) >/dev/null 2>"$T/err"
	check "$?" 1 "host out of memory: exit status"
	grep -q 'out of \(host \)\?memory' "$T/err" && [ ! -e "$T/hoom.json" ] && ok ||
		bad "host out of memory: $(cat "$T/err")"
fi
# a failure inside a batch names its own record: 5000 loads, then one beyond 4-level paging;
# the same message from a run, from a run driving three simulators (--modes) and from a
# threaded sweep worker
awk 'BEGIN { for (i = 0; i < 5000; i++) printf " L %x,8\n", 65536 + (i % 10) * 8; print " L 7fffffffffffff,8" }' \
	>"$T/far.lackey"
want="$T/far.lackey: record 5001: address 0x80000000000000 needs more than 4-level paging (walk.levels)"
expect_error "$want" $MMUSIM run "$T/far.lackey" --quiet
expect_error "$want" $MMUSIM run "$T/far.lackey" --modes base,thp,hugetlbfs --quiet
printf 'trace: %s\nsweep:\n  tlb.l1d.4K.entries: [8, 16, 32]\n' "$T/far.lackey" >"$T/far.yaml"
$MMUSIM sweep "$T/far.yaml" -j 2 -o "$T/far.csv" --quiet >"$T/out" 2>"$T/err"
check "$?" 2 "sweep over a failing trace: exit status"
grep -qF "$want" "$T/err" && ok || bad "sweep worker's failure message: $(cat "$T/err")"
# SIGINT during a run: exit 130, no result file, no temporary
$MMUSIM run -w gups:size=64M,updates=50000000 --json "$T/int.json" --quiet &
rpid=$!
sleep 1
kill -INT $rpid
wait $rpid
check "$?" 130 "interrupted run's exit status"
ls "$T" | grep -q '^int.json' && bad "an interrupted run left a file" || ok
# GNU option forms, --help on every command, --version: the same as the spelled-out forms
$MMUSIM --version | grep -qE '^mmusim [0-9][^ ]* \(build ([0-9a-f]+|none)\)$' && ok || bad "--version: $($MMUSIM --version)"
check "$($MMUSIM version)" "$($MMUSIM --version)" "mmusim version"
for c in run config trace capture sweep merge plot demo help version; do
	$MMUSIM $c --help >"$T/h" 2>&1 && head -1 "$T/h" | grep -q "^mmusim $c" && ok || bad "$c --help: $(head -1 "$T/h")"
done
# the demo: its three cases, the fragmented one as the kernel model has it: the
# 256-page pool leaves 768 of 1024 pageblocks free, 75% of those (576) get a
# pinned page, so 192 order-9 blocks are left for the table's 256 THP faults
$MMUSIM demo --outdir "$T/demo" >"$T/demo.out" 2>&1 || bad "mmusim demo: $(tail -1 "$T/demo.out")"
check "$(grep -c -e "Mel Gorman's 2010" -e "Transparent huge pages in 2.6.38" "$T/demo.out")" 2 \
	"demo: says what the article and the mail are"
check "$(grep -c -e '^STREAM (' -e '^GUPS (' -e '^GUPS, fragmented (' "$T/demo.out")" 3 "demo: three cases"
grep -q 'THP: 64 of its 256 2 MiB faults fell back to 4 KiB pages' "$T/demo.out" && ok ||
	bad "demo: THP fallbacks on fragmented memory: $(grep 'THP:' "$T/demo.out")"
grep -q 'hugetlbfs, from its pool set aside before the fragmentation: coverage 100%' "$T/demo.out" && ok ||
	bad "demo: the boot-time pool's coverage: $(grep 'hugetlbfs, from' "$T/demo.out")"
[ -s "$T/demo/demo.png" ] && ok || bad "demo: no demo.png"
# a usage error: what is wrong, then where the help is; exit 2
$MMUSIM run --bogus 2>"$T/ue"
check "$?:$(tr '\n' '|' <"$T/ue")" "2:mmusim: unknown option '--bogus'|see 'mmusim help run'|" "usage error"
$MMUSIM sweep 2>"$T/ue"
check "$?:$(tr '\n' '|' <"$T/ue")" "2:mmusim: sweep: no SWEEP.yaml|see 'mmusim help sweep'|" "sweep usage error"
$MMUSIM frob 2>"$T/ue"
check "$?:$(tr '\n' '|' <"$T/ue")" "2:mmusim: unknown command 'frob'|see 'mmusim help'|" "unknown command"
$MMUSIM run --config=configs/skylake.yaml --json=- --quiet --set=os.mode=thp -wgups:size=1M,updates=2000 |
	strip >"$T/gnu.json"
$MMUSIM run -c configs/skylake.yaml --json - --quiet --set os.mode=thp -w gups:size=1M,updates=2000 |
	strip >"$T/plain.json"
cmp -s "$T/gnu.json" "$T/plain.json" && ok || bad "--config=F --json=- --set=k=v -wSPEC differ from their spelled-out forms"
expect_error "mmusim: --json needs a value" $MMUSIM run --json
# one end-to-end run under valgrind memcheck (not on an ASan build): no errors, no leaks
if command -v valgrind >/dev/null 2>&1 && ! grep -q __asan_init "$MMUSIM"; then
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		$MMUSIM run tests/golden/mixed.lackey --modes base,hugetlbfs,thp --json "$T/vg.json" --quiet \
		2>"$T/vg.err" && [ ! -s "$T/vg.err" ] && ok || bad "valgrind memcheck: $(head -5 "$T/vg.err")"
fi

echo "  e2e: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
