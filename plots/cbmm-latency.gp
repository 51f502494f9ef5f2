# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/cbmm-latency-cdf.csv -x log2_cycles -y cdf --by os.fragmentation.unmovable --facet process --size 1400x600 --kind lines --title 'fault latency per process, 0 to 90 % of pageblocks pinned' -o plots/out/cbmm-latency.png --script plots/cbmm-latency.gp
# Redraw it with: gnuplot plots/cbmm-latency.gp (writes plots/out/cbmm-latency.png)
set terminal pngcairo size 1400,600 noenhanced font 'Sans,11'
set output 'plots/out/cbmm-latency.png'
set encoding utf8
set multiplot layout 1,2 title 'fault latency per process, 0 to 90 % of pageblocks pinned'
set title 'process = 0'
set xlabel 'log2_cycles (cycles)'
set ylabel 'cdf'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set grid
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s1 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s2 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s3 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s4 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s5 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s6 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s7 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0.980192
9 0.980192
10 0.980192
11 0.980192
12 0.980192
13 0.980192
14 0.980192
15 0.980192
16 0.980192
17 0.998722
18 1
EOD
$s8 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0.992796
9 0.992796
10 0.992796
11 0.992796
12 0.992796
13 0.992796
14 0.992796
15 0.992796
16 0.992796
17 0.999723
18 0.999723
19 1
EOD
$s9 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0.998152
9 0.998152
10 0.998152
11 0.998152
12 0.998152
13 0.998152
14 0.998152
15 0.998152
16 0.998152
17 0.999487
18 0.999487
19 1
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 title '0.0', \
     $s1 using 1:2 with linespoints lw 2 pt 5 ps 1 title '0.1', \
     $s2 using 1:2 with linespoints lw 2 pt 9 ps 1 title '0.2', \
     $s3 using 1:2 with linespoints lw 2 pt 11 ps 1 title '0.3', \
     $s4 using 1:2 with linespoints lw 2 pt 13 ps 1 title '0.4', \
     $s5 using 1:2 with linespoints lw 2 pt 7 ps 1 title '0.5', \
     $s6 using 1:2 with linespoints lw 2 pt 5 ps 1 title '0.6', \
     $s7 using 1:2 with linespoints lw 2 pt 9 ps 1 title '0.7', \
     $s8 using 1:2 with linespoints lw 2 pt 11 ps 1 title '0.8', \
     $s9 using 1:2 with linespoints lw 2 pt 13 ps 1 title '0.9'
set autoscale
unset logscale
unset offsets
unset lmargin
unset grid
set xtics norotate autofreq
set title 'process = 1'
set xlabel 'log2_cycles (cycles)'
set ylabel 'cdf'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set grid
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s1 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s2 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s3 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s4 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s5 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0
9 0
10 0
11 0
12 0
13 0
14 0
15 0
16 0
17 1
EOD
$s6 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0.990639
9 0.990639
10 0.990639
11 0.990639
12 0.990639
13 0.990639
14 0.990639
15 0.990639
16 0.990639
17 0.999032
18 1
EOD
$s7 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0.997685
9 0.997685
10 0.997685
11 0.997685
12 0.997685
13 0.997685
14 0.997685
15 0.997685
16 0.997685
17 0.999635
18 0.999878
19 1
EOD
$s8 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0.998943
9 0.998943
10 0.998943
11 0.998943
12 0.998943
13 0.998943
14 0.998943
15 0.998943
16 0.998943
17 0.999593
18 0.999756
19 1
EOD
$s9 << EOD
0 0
1 0
2 0
3 0
4 0
5 0
6 0
7 0
8 0.999375
9 0.999375
10 0.999375
11 0.999375
12 0.999375
13 0.999375
14 0.999375
15 0.999375
16 0.999375
17 0.999922
18 0.999922
19 1
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 title '0.0', \
     $s1 using 1:2 with linespoints lw 2 pt 5 ps 1 title '0.1', \
     $s2 using 1:2 with linespoints lw 2 pt 9 ps 1 title '0.2', \
     $s3 using 1:2 with linespoints lw 2 pt 11 ps 1 title '0.3', \
     $s4 using 1:2 with linespoints lw 2 pt 13 ps 1 title '0.4', \
     $s5 using 1:2 with linespoints lw 2 pt 7 ps 1 title '0.5', \
     $s6 using 1:2 with linespoints lw 2 pt 5 ps 1 title '0.6', \
     $s7 using 1:2 with linespoints lw 2 pt 9 ps 1 title '0.7', \
     $s8 using 1:2 with linespoints lw 2 pt 11 ps 1 title '0.8', \
     $s9 using 1:2 with linespoints lw 2 pt 13 ps 1 title '0.9'
unset multiplot
