# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/fragmentation.csv -x os.fragmentation.unmovable -y cycles.total --kind lines -o plots/out/fragmentation.png --script plots/fragmentation.gp
# Redraw it with: gnuplot plots/fragmentation.gp (writes plots/out/fragmentation.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/fragmentation.png'
set encoding utf8
set title 'cycles.total vs os.fragmentation.unmovable'
set xlabel 'os.fragmentation.unmovable'
set ylabel 'cycles.total (million cycles)'
unset key
set grid
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
0 324.55314
0.1 324.55314
0.2 324.55314
0.3 324.55314
0.4 324.55314
0.5 324.55314
0.6 332.22947
0.7 344.823866
0.8 359.338818
0.9 373.582524
1 389.321456
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 title 'cycles.total'
