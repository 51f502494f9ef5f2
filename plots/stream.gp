# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/stream.csv -x workload.size -y cycles.translation,cycles.fault --by os.mode --logx --logy --kind lines --input stream:iterations=1 -o plots/out/stream.png --script plots/stream.gp
# Redraw it with: gnuplot plots/stream.gp (writes plots/out/stream.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/stream.png'
set encoding utf8
set title 'translation cycles and fault cycles vs workload size by mode on stream:iterations=1'
set xlabel 'workload size (bytes)'
set ylabel 'translation cycles, fault cycles (millions)'
set key outside right top vertical
set key title 'mode'
set grid
set logscale x 2
set logscale y 10
set xtics ('128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576, '2M' 2097152, '4M' 4194304, '8M' 8388608, '16M' 16777216, '32M' 33554432, '64M' 67108864, '128M' 134217728, '256M' 268435456, '512M' 536870912, '1G' 1073741824)
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
131072 0.005256
262144 0.009912
524288 0.019224
1048576 0.040924
2097152 0.081248
4194304 0.1619
8388608 0.328008
16777216 0.65542
33554432 1.310668
67108864 2.805616
134217728 5.610832
268435456 11.221264
536870912 22.442132
1073741824 44.883864
EOD
$s1 << EOD
131072 0.005256
262144 0.009912
524288 0.019224
1048576 0.013032
2097152 0.000644
4194304 0.000692
8388608 0.000984
16777216 0.001372
33554432 0.00292
67108864 0.00544
134217728 0.01048
268435456 0.02056
536870912 0.040724
1073741824 0.081048
EOD
$s2 << EOD
131072 0.005256
262144 0.009912
524288 0.019224
1048576 0.013032
2097152 0.000644
4194304 0.000692
8388608 0.000984
16777216 0.001372
33554432 0.00292
67108864 0.00544
134217728 0.01048
268435456 0.02056
536870912 0.040724
1073741824 0.081048
EOD
$s3 << EOD
131072 0.043776
262144 0.087552
524288 0.175104
1048576 0.350208
2097152 0.700416
4194304 1.400832
8388608 2.801664
16777216 5.603328
33554432 11.206656
67108864 22.413312
134217728 44.826624
268435456 89.653248
536870912 179.306496
1073741824 358.612992
EOD
$s4 << EOD
131072 0.043776
262144 0.087552
524288 0.175104
1048576 0.248008
2097152 0.393816
4194304 0.787632
8388608 1.575264
16777216 3.150528
33554432 6.301056
67108864 12.602112
134217728 25.204224
268435456 50.408448
536870912 100.816896
1073741824 201.633792
EOD
$s5 << EOD
131072 0.043776
262144 0.087552
524288 0.175104
1048576 0.248008
2097152 0.393816
4194304 0.787632
8388608 1.575264
16777216 3.150528
33554432 6.301056
67108864 12.602112
134217728 25.204224
268435456 50.408448
536870912 100.816896
1073741824 201.633792
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 lc 1 dt 1 title 'base, translation cycles', \
     $s1 using 1:2 with linespoints lw 2 pt 5 ps 1 lc 2 dt 1 title 'hugetlbfs, translation cycles', \
     $s2 using 1:2 with linespoints lw 2 pt 9 ps 1 lc 3 dt 1 title 'thp, translation cycles', \
     $s3 using 1:2 with linespoints lw 2 pt 11 ps 1 lc 1 dt 2 title 'base, fault cycles', \
     $s4 using 1:2 with linespoints lw 2 pt 13 ps 1 lc 2 dt 2 title 'hugetlbfs, fault cycles', \
     $s5 using 1:2 with linespoints lw 2 pt 7 ps 1 lc 3 dt 2 title 'thp, fault cycles'
