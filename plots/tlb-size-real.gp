# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/tlb-size-real.csv -x tlb.l1d.4K.entries -y mpki:tlb.l1d.misses --by tlb.stlb.entries --logx --kind lines -o plots/out/tlb-size-real.png --script plots/tlb-size-real.gp
# Redraw it with: gnuplot plots/tlb-size-real.gp (writes plots/out/tlb-size-real.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/tlb-size-real.png'
set encoding utf8
set title 'mpki:tlb.l1d.misses vs tlb.l1d.4K.entries by tlb.stlb.entries'
set xlabel 'tlb.l1d.4K.entries (entries)'
set ylabel 'tlb.l1d.misses per 1000 instructions (MPKI)'
set key outside right top vertical
set key title 'tlb.stlb.entries'
set grid
set logscale x 2
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
4 65.54262164
8 41.54640108
16 8.072524593
32 0.7926381926
64 0.1148424654
128 0.04120817877
256 0.03557864615
EOD
$s1 << EOD
4 65.54262164
8 41.54640108
16 8.072524593
32 0.7926381926
64 0.1148424654
128 0.04120817877
256 0.03557864615
EOD
$s2 << EOD
4 65.54262164
8 41.54640108
16 8.072524593
32 0.7926381926
64 0.1148424654
128 0.04120817877
256 0.03557864615
EOD
$s3 << EOD
4 65.54262164
8 41.54640108
16 8.072524593
32 0.7926381926
64 0.1148424654
128 0.04120817877
256 0.03557864615
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 title '0', \
     $s1 using 1:2 with linespoints lw 2 pt 5 ps 1 title '256', \
     $s2 using 1:2 with linespoints lw 2 pt 9 ps 1 title '512', \
     $s3 using 1:2 with linespoints lw 2 pt 11 ps 1 title '1024'
