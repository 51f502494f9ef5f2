# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/fragmentation.csv -x os.fragmentation.unmovable -y vmstat.thp_fault_alloc,vmstat.thp_fault_fallback --kind lines --input gups:size=512M,updates=1000000 -o plots/out/fragmentation-fallbacks.png --script plots/fragmentation-fallbacks.gp
# Redraw it with: gnuplot plots/fragmentation-fallbacks.gp (writes plots/out/fragmentation-fallbacks.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/fragmentation-fallbacks.png'
set encoding utf8
set title 'thp_fault_alloc and thp_fault_fallback vs share of pageblocks pinned by an unmovable page'."\n".'on gups:size=512M,updates=1000000'
set xlabel 'share of pageblocks pinned by an unmovable page'
set ylabel 'thp_fault_alloc, thp_fault_fallback'
set key outside right top vertical
set grid
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
0 256
0.1 256
0.2 256
0.3 256
0.4 256
0.5 256
0.6 205
0.7 154
0.8 102
0.9 51
1 0
EOD
$s1 << EOD
0 0
0.1 0
0.2 0
0.3 0
0.4 0
0.5 0
0.6 51
0.7 102
0.8 154
0.9 205
1 256
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 lc 1 dt 1 title 'thp_fault_alloc', \
     $s1 using 1:2 with linespoints lw 2 pt 5 ps 1 lc 2 dt 2 title 'thp_fault_fallback'
