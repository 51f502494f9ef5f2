# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/stream.csv -x workload.size -y cycles.translation,cycles.fault --by os.mode --logx --logy --kind lines --input stream:iterations=1 -o plots/out/stream.png --script plots/stream.gp
# Redraw it with: gnuplot plots/stream.gp (writes plots/out/stream.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/stream.png'
set encoding utf8
set title 'translation cycles and fault cycles vs workload size by mode on stream:iterations=1'
set xlabel 'workload size (bytes)'
set ylabel 'translation cycles, fault cycles'
set key outside right top vertical
set key title 'mode'
set grid
set logscale x 2
set logscale y 10
set xtics rotate by 30 right
set xtics ('128K' 131072, '256K' 262144, '512K' 524288, '1M' 1048576, '2M' 2097152, '4M' 4194304, '8M' 8388608, '16M' 16777216, '32M' 33554432, '64M' 67108864, '128M' 134217728, '256M' 268435456, '512M' 536870912, '1G' 1073741824)
set autoscale xfix
set autoscale yfix
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
set format x '%.10g'
set format y '%.10g'
$s0 << EOD
131072 5256
262144 9912
524288 19224
1048576 40924
2097152 81248
4194304 161900
8388608 328008
16777216 655420
33554432 1310668
67108864 2805616
134217728 5610832
268435456 11221264
536870912 22442132
1073741824 44883864
EOD
$s1 << EOD
131072 5256
262144 9912
524288 19224
1048576 13032
2097152 644
4194304 692
8388608 984
16777216 1372
33554432 2920
67108864 5440
134217728 10480
268435456 20560
536870912 40724
1073741824 81048
EOD
$s2 << EOD
131072 5256
262144 9912
524288 19224
1048576 13032
2097152 644
4194304 692
8388608 984
16777216 1372
33554432 2920
67108864 5440
134217728 10480
268435456 20560
536870912 40724
1073741824 81048
EOD
$s3 << EOD
131072 43776
262144 87552
524288 175104
1048576 350208
2097152 700416
4194304 1400832
8388608 2801664
16777216 5603328
33554432 11206656
67108864 22413312
134217728 44826624
268435456 89653248
536870912 179306496
1073741824 358612992
EOD
$s4 << EOD
131072 43776
262144 87552
524288 175104
1048576 248008
2097152 393816
4194304 787632
8388608 1575264
16777216 3150528
33554432 6301056
67108864 12602112
134217728 25204224
268435456 50408448
536870912 100816896
1073741824 201633792
EOD
$s5 << EOD
131072 43776
262144 87552
524288 175104
1048576 248008
2097152 393816
4194304 787632
8388608 1575264
16777216 3150528
33554432 6301056
67108864 12602112
134217728 25204224
268435456 50408448
536870912 100816896
1073741824 201633792
EOD
plot $s0 using 1:2 with linespoints lw 2 pt 7 ps 1 lc 1 dt 1 title 'base, translation cycles', \
     $s1 using 1:2 with linespoints lw 2 pt 5 ps 1 lc 2 dt 1 title 'hugetlbfs, translation cycles', \
     $s2 using 1:2 with linespoints lw 2 pt 9 ps 1 lc 3 dt 1 title 'thp, translation cycles', \
     $s3 using 1:2 with linespoints lw 2 pt 11 ps 1 lc 1 dt 2 title 'base, fault cycles', \
     $s4 using 1:2 with linespoints lw 2 pt 13 ps 1 lc 2 dt 2 title 'hugetlbfs, fault cycles', \
     $s5 using 1:2 with linespoints lw 2 pt 7 ps 1 lc 3 dt 2 title 'thp, fault cycles'
