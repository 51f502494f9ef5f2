# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/fragmentation.csv -x os.fragmentation.unmovable -y memory.huge_coverage --kind lines --input gups:size=512M,updates=1000000 -o plots/out/fragmentation.png --script plots/fragmentation.gp
# Redraw it with: gnuplot plots/fragmentation.gp (writes plots/out/fragmentation.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/fragmentation.png'
set encoding utf8
set title 'huge page coverage of resident memory vs share of pageblocks pinned by an unmovable page'."\n".'on gups:size=512M,updates=1000000'
set xlabel 'share of pageblocks pinned by an unmovable page'
set ylabel 'huge page coverage of resident memory (%)'
unset key
set grid
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
0 100
0.1 100
0.2 100
0.3 100
0.4 100
0.5 100
0.6 80.078125
0.7 60.15625
0.8 39.84375
0.9 19.921875
1 0
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 title 'memory.huge_coverage'
