#!/bin/bash
# e2e_plots.sh - figures of real captures on the command line: the per-mapping plot of
# `run --vmas-csv` on a committed trace (names unique, the axis of whole-run totals not
# "per interval"), `sweep --plot` over three dimensions (a panel per value of the third)
# and four (a warning, exit 0, the CSV kept), `plot --where`, `--facet`, `--size`,
# `--font-size`, the rows an undefined -y A/B leaves out told on stderr, and the scripts
# the same bytes run after run. Run from the repository root by tests/run.sh (make check)
# with MMUSIM set to the binary under test; a few seconds.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh
MM=$(cd "$(dirname "$MMUSIM")" && pwd)/$(basename "$MMUSIM")
REPO=$(pwd)
cd "$T" || exit 1

# --- the README's per-mapping recipe on a committed capture ------------------------
# xz-6 unmaps a file mapping and maps another at the same address: two rows that were
# both "file@0x483c000" ("duplicate point"); now each carries its id
"$MM" run "$REPO/traces/xz-6.lackey.zst" -q --set os.mode=thp --vmas-csv v.csv >/dev/null
check "$?" 0 "run --vmas-csv on xz-6"
check "$(cut -d, -f3 v.csv | sort | uniq -d | wc -l)" 0 "names unique in v.csv"
check "$(grep -o 'file@0x483c000[^,]*' v.csv | sort | tr '\n' ' ')" "file@0x483c000#10 file@0x483c000#22 " \
	"the two mappings at one address"
"$MM" plot v.csv -x name -y walk_cycles --kind bars -o v.png --script v.gp >out 2>err
check "$?" 0 "plot -x name -y walk_cycles of a real capture: $(cat err)"
check "$(head -c 4 v.png | tail -c 3)" "PNG" "v.png"
# whole-run totals: no "per interval" (that is a timeline's)
check "$(grep -e '^set ylabel' -e '^set xlabel' v.gp | tr '\n' '|')" "set xlabel 'mapping'|set ylabel 'walk cycles'|" \
	"the vmas plot's axes"
check "$(grep '^set title' v.gp)" "set title 'walk cycles per mapping'" "the vmas plot's title"
# the README's recipe as written: whole-run totals on the axis
"$MM" run "$REPO/traces/sqlite3.mtr.zst" -q --set os.mode=thp --vmas=12 --vmas-csv vmas.csv >/dev/null
"$MM" plot vmas.csv -x name -y walk_cycles --kind bars -o vmas.png --script vmas.gp >/dev/null
check "$(grep '^set ylabel' vmas.gp)" "set ylabel 'walk cycles'" "the README's vmas plot: its y axis"
"$MM" run -w gups:size=4M,updates=20000 --timeline tl.csv --timeline-ms 0.1 -q >/dev/null
"$MM" plot tl.csv -y walks --script tl.gp >/dev/null
check "$(grep '^set ylabel' tl.gp)" "set ylabel 'page walks per interval'" "a timeline's y axis"

# --- sweep --plot: inputs x key x mode, then a fourth dimension ---------------------
cat >s3.yaml <<'EOS'
workload: ["gups:size=64K,updates=2000", "stream:size=64K,iterations=1"]
set: { os.memory: 64M }
sweep:
  tlb.l1d.4K.entries: [16, 64]
  os.mode: [base, thp]
EOS
"$MM" sweep s3.yaml -o s3.csv -j 2 --quiet --plot s3.png >out 2>err
check "$?" 0 "sweep --plot over three dimensions"
check "$(cat err)" "" "sweep --plot's stderr"
check "$(head -c 4 s3.png | tail -c 3)" "PNG" "s3.png"
# what it drew: the same as plot --facet on the CSV, a panel per L1 dTLB size
"$MM" plot s3.csv -x input -y cycles.total --by os.mode --base base --facet tlb.l1d.4K.entries \
	--script f.gp >/dev/null
check "$(grep -c '^set multiplot layout 1,2 title' f.gp)" 1 "two panels side by side"
check "$(grep '^set title' f.gp | tr '\n' '|')" \
	"set title 'L1 dTLB 4K entries = 16'|set title 'L1 dTLB 4K entries = 64'|" "the panels' titles"
check "$(grep -c '^set terminal pngcairo size 1200,440 ' f.gp)" 1 "600x400 per panel"
sed 's/^workload:.*/&\n/; s/^  os.mode/  tlb.l1d.2M.entries: [8, 32]\n&/' s3.yaml >s4.yaml
"$MM" sweep s4.yaml -o s4.csv -j 2 --quiet --plot s4.png >out 2>err
check "$?" 0 "sweep --plot over four dimensions: exit 0"
check "$(cat err)" "sweep: warning: no figure s4.png: more than three swept dimensions (draw it with mmusim plot --where)" \
	"sweep --plot over four dimensions: the warning"
check "$(sed 1d s4.csv | wc -l) $([ -e s4.png ] && echo png)" "16 " "the CSV written, no image"

# --- plot --where: rows selected, several values of a key, numbers by value ---------
cp "$REPO/tests/data/plot_modes.csv" "$REPO/tests/data/plot_sweep.csv" "$REPO/tests/data/plot_sizes.csv" .
"$MM" plot plot_modes.csv -x input -y cycles.total --by os.mode --where os.mode=base --where os.mode=thp \
	--where input=gups:size=32M --script w.gp >/dev/null
check "$(sed -n '/^\$s0 << EOD/,/^EOD/p' w.gp | tr '\n' '|')" '$s0 << EOD|0 -30.15313049 -31.05772441 "-30.15%"|EOD|' \
	"--where: thp's one bar, gups only"
check "$(grep -c '^\$s1 << EOD' w.gp)" 0 "--where: no hugetlbfs series"
check "$(sed -n 2p w.gp)" \
	"#   mmusim plot plot_modes.csv -x input -y cycles.total --by os.mode --where os.mode=base --where os.mode=thp --where input=gups:size=32M --kind bars --base base --script w.gp" \
	"--where in the script's command"
"$MM" plot plot_sizes.csv -x cache.llc.size -y walk.cycles --where cache.llc.size=1048576 --kind bars \
	--script n.gp >/dev/null
check "$(grep "^set xtics nomirror" n.gp)" "set xtics nomirror scale 0 ('1M' 0)" "--where a number by its value"
expect_error "--where: 'os.mode': expected KEY=VALUE" "$MM" plot plot_modes.csv -x input \
	-y cycles.total --where os.mode -o x.png
expect_error "plot_modes.csv: no column 'os.mod' " "$MM" plot plot_modes.csv -x input \
	-y cycles.total --where os.mod=base -o x.png
expect_error "plot_modes.csv: no data row is selected by --where" "$MM" plot plot_modes.csv \
	-x input -y cycles.total --where os.mode=none -o x.png
expect_error "--facet: not with --abs" "$MM" plot plot_modes.csv -x input -y cycles.total \
	--by os.mode --abs --facet input -o x.png

# --- figure and font size -----------------------------------------------------------
"$MM" plot plot_sweep.csv -x tlb.l1d.4K.entries -y walk.walks --by os.mode --size 3.3x2.2in \
	--font-size 8 -o p.pdf --script p.gp >/dev/null
check "$(grep '^set terminal' p.gp)" "set terminal pdfcairo size 3.3in,2.2in noenhanced font 'Sans,8'" \
	"--size 3.3x2.2in --font-size 8 (PDF)"
check "$(head -c 5 p.pdf)" "%PDF-" "p.pdf"
"$MM" plot plot_modes.csv -x input -y cycles.total --by os.mode --size 8.4x5.6cm --font-size 8 \
	--script c.gp >/dev/null
check "$(grep '^set terminal' c.gp)" "set terminal pngcairo size 463,309 noenhanced font 'Sans,8'" \
	"--size in cm: pixels at 140 to the inch"
check "$(grep -c "font 'Sans,6.5' notitle" c.gp)" 4 "bar labels at 9/11 of the font"
"$MM" plot plot_modes.csv -x input -y cycles.total --by os.mode --size 800x500 --script d.gp >/dev/null
check "$(grep '^set terminal' d.gp)" "set terminal pngcairo size 800,500 noenhanced font 'Sans,11'" \
	"--size in pixels"
expect_error "--size: '3.3x': expected WxH with a unit in, cm or px" "$MM" plot plot_modes.csv \
	-x input -y cycles.total --size 3.3x -o x.png
expect_error "--size: '0.3x2in': each side from 0.5 in (70 px) to 50 in (7000 px)" "$MM" plot \
	plot_modes.csv -x input -y cycles.total --size 0.3x2in -o x.png
expect_error "--font-size: '100': expected points, 4 to 72" "$MM" plot plot_modes.csv -x input \
	-y cycles.total --font-size 100 -o x.png
[ -e x.png ] && bad "an image was written on bad usage" || ok

# --- -y A/B: rows with a zero divisor are left out, and said so ---------------------
printf 'point,x,walk.cycles,walk.walks\n0,1,100,10\n1,2,0,0\n2,3,300,30\n3,4,50,0\n' >z.csv
"$MM" plot z.csv -x x -y walk.cycles/walk.walks --script z.gp >out 2>err
check "$?" 0 "plot -y A/B with zero divisors"
check "$(cat err)" \
	"plot: warning: z.csv: 2 of 4 rows left out: walk.cycles/walk.walks is undefined where walk.walks is 0 (lines 3, 5)" \
	"the rows left out, on stderr"
check "$(sed -n '/^\$s0 << EOD/,/^EOD/p' z.gp | tr '\n' '|')" '$s0 << EOD|1 10|3 10|EOD|' "the rows drawn"
"$MM" plot z.csv -x x -y walk.cycles --script z2.gp >out 2>err
check "$(cat err)" "" "no warning without a divisor"

# --- the same bytes, run after run ----------------------------------------------------
for i in 1 2; do
	"$MM" plot plot_sweep.csv -x tlb.l1d.4K.entries -y walk.walks --by os.mode --facet os.mode \
		--size 6x3in --font-size 9 -o r$i.png --script r$i.gp >/dev/null
done
cmp -s r1.png r2.png && ok || bad "--facet --size: PNGs differ between runs"
cmp -s <(sed 's/r1\./r2./g' r1.gp) r2.gp && ok || bad "--facet --size: scripts differ between runs"

echo "  e2e_plots: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
