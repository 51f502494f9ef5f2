# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/ingens-fairness-timeline.csv -y huge_coverage --by process --kind timeline --title 'two identical GUPS processes, the second started later, 80 % of pageblocks pinned' -o plots/out/ingens-fairness.png --script plots/ingens-fairness.gp
# Redraw it with: gnuplot plots/ingens-fairness.gp (writes plots/out/ingens-fairness.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/ingens-fairness.png'
set encoding utf8
set title 'two identical GUPS processes, the second started later, 80 % of pageblocks pinned'
set xlabel 'simulated time (ms)'
set ylabel 'huge page coverage of resident memory (%)'
set key outside right top vertical
set key title 'process'
set grid
set autoscale xfix
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
set xrange [0:*]
$s0 << EOD
2 100
4 100
6 100
8 100
10 100
12 100
14 100
16 100
18 100
20 100
22 100
24 100
26 100
28 100
30 100
32 100
34 100
36 100
38 100
40 100
42 100
44 100
46 100
48 100
50 100
52 100
54 100
56 100
58 100
60 100
62 100
64 100
66 100
68 100
70 100
72 100
74 100
76 100
78 100
80 100
82 100
84 100
86 100
88 100
EOD
$s1 << EOD
20 100
22 100
24 100
26 100
28 100
30 100
32 100
34 94.704
36 79.0573
38 79.0573
40 71.677
42 61.6633
44 59.375
46 59.375
48 59.375
50 59.375
52 59.375
54 59.375
56 59.375
58 59.375
60 59.375
62 59.375
64 59.375
66 59.375
68 59.375
70 59.375
72 59.375
74 59.375
76 59.375
78 59.375
80 59.375
82 59.375
84 59.375
86 59.375
88 59.375
90 59.375
92 59.375
94 59.375
96 59.375
98 59.375
100 59.375
102 59.375
104 59.375
106 59.375
108 59.375
110 59.375
112 59.375
114 59.375
116 59.375
EOD
plot $s0 using 1:2 with lines lw 2 dt 1 title '0', \
     $s1 using 1:2 with lines lw 2 dt 2 title '1'
