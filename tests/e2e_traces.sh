#!/bin/bash
# End-to-end checks of the rooms: the committed real traces in traces/ (see
# traces/README.md, "The committed traces"), the sweeps of configs/sweeps/ and the
# figure scripts of plots/. Run from the repository root by tests/run.sh (make check)
# with MMUSIM set to the binary under test; prints one "FAIL: ..." line per failed
# check and "N checks, N failed", and exits non-zero if any failed.
#
# - `mmusim trace info traces/T` prints exactly the block that traces/README.md shows
#   under "$ mmusim trace info traces/T" (the README is the expectation: the two cannot
#   drift apart);
# - each trace replayed once under base and thp (one decode, `--modes base,thp`) on
#   the built-in machine gives exactly the walk and THP fault counts below, measured
#   when the traces were committed (and shown in the README's "Replayed" table);
# - every sweep in configs/sweeps/ parses (`--list`), and stlb-xz.yaml, run whole,
#   gives the walks its comment describes;
# - every committed plots/*.gp draws a PNG with gnuplot alone (in a scratch directory),
#   and `plot --script` works from the command line (alone, and to standard output).
MMUSIM=${MMUSIM:-./mmusim}
README=traces/README.md
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

# TRACE  walks under base  walks under thp  thp_fault_alloc under thp
GOLDEN="
xz-6.lackey.zst       2754  767 11
dd-sparse.lackey.zst  4379  905 3
sqlite3.mtr.zst        650  754 3
"

# the README's block for trace $1: the lines after "$ mmusim trace info traces/$1" up to the fence
readme_info() {
	awk -v cmd="\$ mmusim trace info traces/$1" '
		$0 == cmd { on = 1; next }
		on && /^```/ { exit }
		on { print }' "$README"
}

# counter $3 of mode $2 in a `--modes` JSON report $1 (modes are the top-level keys)
mode_field() {
	awk -v mode="  \"$2\": {" -v key="\"$3\":" '
		$0 == mode { m = 1; next }
		m && /^  "/ { exit }
		m && $1 == key { gsub(/,/, "", $2); print $2; exit }' "$1"
}

ntraces=0
while read -r name base thp alloc; do
	[ -n "$name" ] || continue
	ntraces=$((ntraces + 1))
	trace=traces/$name
	if [ ! -r "$trace" ]; then
		bad "$trace: missing"
		continue
	fi

	readme_info "$name" >"$T/want"
	if [ ! -s "$T/want" ]; then
		bad "$README: no '\$ mmusim trace info $trace' block"
	elif ! $MMUSIM trace info "$trace" >"$T/got" 2>"$T/err"; then
		bad "trace info $trace failed: $(head -1 "$T/err")"
	elif ! cmp -s "$T/want" "$T/got"; then
		bad "trace info $trace differs from $README:"
		diff "$T/want" "$T/got" | sed 's/^/        /'
	else
		ok
	fi

	if ! $MMUSIM run "$trace" --modes base,thp --json "$T/r.json" --quiet 2>"$T/err"; then
		bad "run $trace --modes base,thp failed: $(head -1 "$T/err")"
		continue
	fi
	got="$(mode_field "$T/r.json" base walks) $(mode_field "$T/r.json" thp walks)"
	got="$got $(mode_field "$T/r.json" thp thp_fault_alloc)"
	if [ "$got" = "$base $thp $alloc" ]; then
		ok
	else
		bad "$trace: walks base, walks thp, thp_fault_alloc: got '$got'," \
		    "expected '$base $thp $alloc'"
	fi
done <<<"$GOLDEN"

# --- configs/sweeps/: every example parses (--list), and one runs whole --------------
for f in configs/sweeps/*.yaml; do
	[ -e "$f" ] || continue
	if $MMUSIM sweep "$f" --list --outdir "$T/list" >"$T/list.txt" 2>"$T/err" &&
	   [ -s "$T/list.txt" ]; then
		ok
	else
		bad "sweep $f --list: $(head -1 "$T/err")"
	fi
done
# kernel versions side by side (man page: KERNEL VERSIONS): on xz only the store to the huge
# zero page differs (6.13+: a fresh THP); base pages are the same under every profile
if $MMUSIM sweep configs/sweeps/kernels-xz.yaml -o "$T/kx.csv" --quiet 2>"$T/err"; then
	got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "walk.walks") w = i
		if ($i == "vmstat.thp_fault_alloc") a = i; if ($i == "vmstat.thp_split_pmd") p = i }; next }
		{ printf "%s%s/%s/%s", sep, $w, $a, $p; sep = " " }' "$T/kx.csv")
	want="2641/3/8 2641/3/8 767/11/1"
	[ "$got" = "$want" ] && ok || bad "sweep kernels-xz.yaml walks/thp_fault_alloc/thp_split_pmd: got '$got', expected '$want'"
	# versions are names on the x axis (bars in sweep order), not numbers (6.12 < 6.6)
	if $MMUSIM plot "$T/kx.csv" -x os.kernel -y walk.walks --script "$T/kx.gp" 2>"$T/err" &&
	   grep -q "xtic" "$T/kx.gp"; then
		ok
	else
		bad "plot kernels-xz.csv -x os.kernel: not drawn as categories: $(head -1 "$T/err")"
	fi
else
	bad "sweep configs/sweeps/kernels-xz.yaml: $(head -1 "$T/err")"
fi
# (6.18 differs: its text faults read ahead forward from the fault, do_sync_mmap_readahead()'s
# VM_EXEC branch, and its page cache has ext4's large folios)
for k in 6.6 6.12; do
	$MMUSIM run traces/xz-6.lackey.zst --set os.kernel=$k --json - 2>/dev/null |
		grep -v -e wall_seconds -e refs_per_second -e max_rss_bytes -e config_hash >"$T/base-$k.json"
done
if [ -s "$T/base-6.6.json" ] && cmp -s "$T/base-6.6.json" "$T/base-6.12.json"; then
	ok
else
	bad "xz under base pages: os.kernel=6.6 and 6.12 reports differ (no profile difference applies)"
fi
# the STLB sweep over xz (16 points, one decode): walks per point as its comment says
if $MMUSIM sweep configs/sweeps/stlb-xz.yaml -o "$T/stlb.csv" --quiet 2>"$T/err"; then
	got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "walk.walks") c = i; next }
		{ printf "%s%s", sep, $c; sep = " " }' "$T/stlb.csv")
	want="4792 1000 4271 835 3651 782 3195 771 2754 767 2407 767 2307 767 2306 767"
	[ "$got" = "$want" ] && ok || bad "sweep stlb-xz.yaml walks: got '$got', expected '$want'"
else
	bad "sweep configs/sweeps/stlb-xz.yaml: $(head -1 "$T/err")"
fi

# --- plots/: each committed script draws its figure with gnuplot alone -------------------
root=$(pwd)
mkdir -p "$T/fig/plots/out"
for f in plots/*.gp; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .gp)
	if (cd "$T/fig" && gnuplot "$root/$f") 2>"$T/err" &&
	   [ "$(head -c 4 "$T/fig/plots/out/$name.png" | tail -c 3)" = PNG ]; then
		ok
	else
		bad "gnuplot $f drew no PNG: $(tail -1 "$T/err")"
	fi
done
# plot --script from the command line: the script alone (no -o), and on standard output
if $MMUSIM plot tests/data/plot_modes.csv -x input -y cycles.total --by os.mode \
	--script "$T/m.gp" >"$T/out" && [ "$(cat "$T/out")" = "plot: $T/m.gp" ] &&
   [ ! -e "$T/m.png" ] && (cd "$T" && gnuplot m.gp) && [ -s "$T/m.png" ]; then
	ok
else
	bad "plot --script without -o"
fi
$MMUSIM plot tests/data/plot_timeline.csv --script - >"$T/t.gp" &&
	[ "$(head -1 "$T/t.gp")" = "# Written by mmusim plot --script, the data inline. Made by:" ] &&
	! grep -q '^plot: ' "$T/t.gp" && ok || bad "plot --script - (standard output)"

# every committed trace is covered above
for f in traces/*.zst; do
	grep -q "^$(basename "$f") " <<<"$GOLDEN" || bad "$f has no golden line in $0"
done

echo "    $n checks of traces/, configs/sweeps/ and plots/, $fails failed"
[ "$fails" -eq 0 ]
