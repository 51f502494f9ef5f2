#!/bin/bash
# End-to-end tests of issue 14's items 5 and 6 on the command line: a sweep over a workload
# parameter (workload.size) with repetitions writes a numeric column, OUT.reps.csv (the same as
# `merge --reps`) and its default figure; `plot` draws PDF, --logy, several -y and --abs; bad
# uses are exit 2 with the option named. Run from the repository root by tests/run.sh (make
# check) with MMUSIM set to the binary under test; tiny GUPS tables, a second or two.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh
MM=$(cd "$(dirname "$MMUSIM")" && pwd)/$(basename "$MMUSIM")
cd "$T" || exit 1

cat >g.yaml <<'EOS'
workload: gups:updates=2000
repeat: 2
set: { os.memory: 64M }
sweep:
  workload.size: [64K, 256K]
  os.mode: [base, thp]
EOS
"$MM" sweep g.yaml -o g.csv -j 2 --quiet --plot g.pdf >out 2>err
check "$?" 0 "sweep g.yaml"
# the workload.size column holds bytes; repetitions give .ci95 columns
check "$(cut -d, -f1-3 g.csv | tr '\n' ' ')" \
	"point,workload.size,os.mode 0,65536,base 1,65536,thp 2,262144,base 3,262144,thp " "g.csv's columns"
check "$(cut -d, -f1-4 g.reps.csv | tr '\n' ' ')" \
	"point,rep,workload.size,os.mode 0,0,65536,base 0,1,65536,base 1,0,65536,thp 1,1,65536,thp 2,0,262144,base 2,1,262144,base 3,0,262144,thp 3,1,262144,thp " \
	"g.reps.csv's rows"
"$MM" merge --reps m.csv g.csv.d/*.json
cmp -s m.csv g.reps.csv && ok || bad "merge --reps differs from the sweep's g.reps.csv"
check "$(head -c 5 g.pdf)" "%PDF-" "sweep --plot g.pdf"

# plot: PDF, --logy, several y, the title naming the input, error bars from repetitions
"$MM" plot g.reps.csv -x workload.size -y mpki:tlb.l1d.misses,mpki:tlb.stlb.misses --by os.mode --logx \
	--input gups -o p.pdf --script p.gp >/dev/null
check "$?" 0 "plot -y A,B to pdf"
check "$(head -c 5 p.pdf)" "%PDF-" "p.pdf"
check "$(grep -c "^set terminal pdfcairo size 7.143in,4.286in" p.gp)" 1 "p.gp's terminal"
check "$(grep '^set title' p.gp)" \
	"set title 'L1 dTLB misses per 1000 instructions and STLB misses per 1000 instructions vs workload size by mode'.\"\\n\".'on gups'" \
	"p.gp's title"
check "$(grep -c 'yerrorlines' p.gp)" 4 "error bars on the four lines"
check "$(grep '^set xtics (' p.gp)" "set xtics ('64K' 65536, '256K' 262144)" "ticks as sizes"
"$MM" plot g.csv -x workload.size -y walk.walks --by os.mode --logx --logy -o l.png --script l.gp >/dev/null
check "$(grep -c '^set logscale y 10$' l.gp)" 1 "--logy"
"$MM" plot g.csv -x workload.size -y cycles.total --by os.mode --kind bars --abs -o b.svg >/dev/null
grep -q '<svg' b.svg && ok || bad "--abs bars to svg"

# bad uses
expect_error "--logy: only for lines and timelines" "$MM" plot g.csv -x workload.size -y cycles.total \
	--by os.mode --kind bars --logy -o x.png
expect_error "--abs: only for % change bars" "$MM" plot g.csv -x workload.size -y cycles.total --abs -o x.png
expect_error "x.jpg: plot output must end in .png, .svg or .pdf" "$MM" plot g.csv -x workload.size \
	-y cycles.total -o x.jpg
[ -e x.png ] || [ -e x.jpg ] && bad "an image was written on bad usage" || ok

echo "  e2e_figs: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
