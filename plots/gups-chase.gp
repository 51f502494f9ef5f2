# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/gups-chase.csv -x input -y cycles.total --by os.mode --kind bars --base base -o plots/out/gups-chase.png --script plots/gups-chase.gp
# Redraw it with: gnuplot plots/gups-chase.gp (writes plots/out/gups-chase.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/gups-chase.png'
set encoding utf8
set title 'cycles.total: % change against os.mode = base, per input'
set xlabel 'input'
set ylabel '% change in cycles.total against base'
set key outside right top vertical
set key title 'os.mode'
set yrange [-86.11423613:0]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('gups:size=1M,updates=1000000' 0, 'gups:size=4M,updates=1000000' 1, 'gups:size=16M,updates=1000000' 2, 'gups:size=64M,updates=1000000' 3, 'gups:size=256M,updates=1000000' 4, 'chase:size=1M,steps=1000000' 5, 'chase:size=4M,steps=1000000' 6, 'chase:size=16M,steps=1000000' 7, 'chase:size=64M,steps=1000000' 8, 'chase:size=256M,steps=1000000' 9)
set xtics rotate by 30 right
set lmargin 22
$s0 << EOD
-0.2 0 0.6682823533 "+0.00%"
0.8 -40.42863204 -41.09691439 "-40.43%"
1.8 -36.57226901 -37.24055136 "-36.57%"
2.8 -28.92600209 -29.59428444 "-28.93%"
3.8 -19.73178233 -20.40006469 "-19.73%"
4.8 0 0.6682823533 "+0.00%"
5.8 -66.82823533 -67.49651768 "-66.83%"
6.8 -62.51315293 -63.18143529 "-62.51%"
7.8 -53.45135224 -54.1196346 "-53.45%"
8.8 -38.52042967 -39.18871203 "-38.52%"
EOD
$s1 << EOD
0.2 0 0.6682823533 "+0.00%"
1.2 -40.42863204 -41.09691439 "-40.43%"
2.2 -36.57226901 -37.24055136 "-36.57%"
3.2 -28.92600209 -29.59428444 "-28.93%"
4.2 -19.73178233 -20.40006469 "-19.73%"
5.2 0 0.6682823533 "+0.00%"
6.2 -66.82823533 -67.49651768 "-66.83%"
7.2 -62.51315293 -63.18143529 "-62.51%"
8.2 -53.45135224 -54.1196346 "-53.45%"
9.2 -38.52042967 -39.18871203 "-38.52%"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'hugetlbfs', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'thp', \
     $s0 using 1:($2 >= 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
