# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/cbmm-latency-cdf.csv -x log2_cycles -y ccdf --by os.fragmentation.unmovable --logy --facet process --size 1400x600 --kind lines --title 'the tail: share of faults at or above 2^log2_cycles cycles' -o plots/out/cbmm-latency-tail.png --script plots/cbmm-latency-tail.gp
# Redraw it with: gnuplot plots/cbmm-latency-tail.gp (writes plots/out/cbmm-latency-tail.png)
set terminal pngcairo size 1400,600 noenhanced font 'Sans,11'
set output 'plots/out/cbmm-latency-tail.png'
set encoding utf8
set multiplot layout 1,2 title 'the tail: share of faults at or above 2^log2_cycles cycles'
set title 'process = 0'
set xlabel 'log2_cycles (cycles)'
set ylabel 'ccdf'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set grid
set logscale y 10
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s1 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s2 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s3 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s4 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s5 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s6 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s7 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 0.0198083
10 0.0198083
11 0.0198083
12 0.0198083
13 0.0198083
14 0.0198083
15 0.0198083
16 0.0198083
17 0.0198083
18 0.00127796
EOD
$s8 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 0.00720421
10 0.00720421
11 0.00720421
12 0.00720421
13 0.00720421
14 0.00720421
15 0.00720421
16 0.00720421
17 0.00720421
18 0.000277085
19 0.000277085
EOD
$s9 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 0.00184786
10 0.00184786
11 0.00184786
12 0.00184786
13 0.00184786
14 0.00184786
15 0.00184786
16 0.00184786
17 0.00184786
18 0.000513294
19 0.000513294
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
set ylabel 'ccdf'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set grid
set logscale y 10
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s1 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s2 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s3 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s4 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s5 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 1
10 1
11 1
12 1
13 1
14 1
15 1
16 1
17 1
EOD
$s6 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 0.00936088
10 0.00936088
11 0.00936088
12 0.00936088
13 0.00936088
14 0.00936088
15 0.00936088
16 0.00936088
17 0.00936088
18 0.000968367
EOD
$s7 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 0.00231481
10 0.00231481
11 0.00231481
12 0.00231481
13 0.00231481
14 0.00231481
15 0.00231481
16 0.00231481
17 0.00231481
18 0.000365497
19 0.000121832
EOD
$s8 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 0.00105725
10 0.00105725
11 0.00105725
12 0.00105725
13 0.00105725
14 0.00105725
15 0.00105725
16 0.00105725
17 0.00105725
18 0.000406636
19 0.000243982
EOD
$s9 << EOD
0 1
1 1
2 1
3 1
4 1
5 1
6 1
7 1
8 1
9 0.000624658
10 0.000624658
11 0.000624658
12 0.000624658
13 0.000624658
14 0.000624658
15 0.000624658
16 0.000624658
17 0.000624658
18 7.80823e-05
19 7.80823e-05
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
