# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/tlb-size-real.csv -x tlb.l1d.4K.entries -y walk.walks --by tlb.stlb.entries --logx --logy --kind lines --input small.lackey.zst -o plots/out/tlb-size-real.png --script plots/tlb-size-real.gp
# Redraw it with: gnuplot plots/tlb-size-real.gp (writes plots/out/tlb-size-real.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/tlb-size-real.png'
set encoding utf8
set title 'page walks vs L1 dTLB 4K entries by STLB entries on small.lackey.zst'
set xlabel 'L1 dTLB 4K entries'
set ylabel 'page walks'
set key outside right top vertical
set key title 'STLB entries'
set grid
set logscale x 2
set logscale y 10
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
4 291198
8 184634
16 35981
32 3652
64 642
128 315
256 290
EOD
$s1 << EOD
4 292
8 292
16 292
32 293
64 297
128 292
256 287
EOD
$s2 << EOD
4 285
8 285
16 285
32 285
64 286
128 284
256 284
EOD
$s3 << EOD
4 284
8 284
16 284
32 284
64 284
128 284
256 284
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 title '0', \
     $s1 using 1:2 with linespoints lw 2 pt 5 ps 1 title '256', \
     $s2 using 1:2 with linespoints lw 2 pt 9 ps 1 title '512', \
     $s3 using 1:2 with linespoints lw 2 pt 11 ps 1 title '1024'
