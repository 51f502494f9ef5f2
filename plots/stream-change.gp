# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/stream.csv -x workload.size -y cycles.total --by os.mode --kind bars --input stream:iterations=1 --base base -o plots/out/stream-change.png --script plots/stream-change.gp
# Redraw it with: gnuplot plots/stream-change.gp (writes plots/out/stream-change.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/stream-change.png'
set encoding utf8
set title 'total cycles: % change against mode = base, per workload size on stream:iterations=1'
set xlabel 'workload size (bytes)'
set ylabel '% change in total cycles against base'
set key outside right top vertical
set key title 'mode'
set yrange [-10.85528643:1.462769094]
set xrange [-0.5:13.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('128K' 0, '256K' 1, '512K' 2, '1M' 3, '2M' 4, '4M' 5, '8M' 6, '16M' 7, '32M' 8, '64M' 9, '128M' 10, '256M' 11, '512M' 12, '1G' 13)
$s0 << EOD
-0.2 0 0.09392517338 "+0.00%"
0.8 0 0.09392517338 "+0.00%"
1.8 0 0.09392517338 "+0.00%"
2.8 -6.209440457 -6.303365631 "-6.21%"
3.8 -9.242169061 -9.336094235 "-9.24%"
4.8 -9.2428265 -9.336751673 "-9.24%"
5.8 -9.267998158 -9.361923331 "-9.27%"
6.8 -9.268162938 -9.362088112 "-9.27%"
7.8 -9.267667648 -9.361592821 "-9.27%"
8.8 -9.392491141 -9.486416314 "-9.39%"
9.8 -9.392505131 -9.486430304 "-9.39%"
10.8 -9.392512126 -9.4864373 "-9.39%"
11.8 -9.392515589 -9.486440762 "-9.39%"
12.8 -9.392517338 -9.486442511 "-9.39%"
EOD
$s1 << EOD
0.2 0 0.09392517338 "+0.00%"
1.2 0 0.09392517338 "+0.00%"
2.2 0 0.09392517338 "+0.00%"
3.2 -6.209440457 -6.303365631 "-6.21%"
4.2 -9.242169061 -9.336094235 "-9.24%"
5.2 -9.2428265 -9.336751673 "-9.24%"
6.2 -9.267998158 -9.361923331 "-9.27%"
7.2 -9.268162938 -9.362088112 "-9.27%"
8.2 -9.267667648 -9.361592821 "-9.27%"
9.2 -9.392491141 -9.486416314 "-9.39%"
10.2 -9.392505131 -9.486430304 "-9.39%"
11.2 -9.392512126 -9.4864373 "-9.39%"
12.2 -9.392515589 -9.486440762 "-9.39%"
13.2 -9.392517338 -9.486442511 "-9.39%"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'hugetlbfs', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'thp', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
