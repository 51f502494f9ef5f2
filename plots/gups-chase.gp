# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/gups-chase.csv -x input -y walk.cycles --by os.mode --abs --kind bars --base base -o plots/out/gups-chase.png --script plots/gups-chase.gp
# Redraw it with: gnuplot plots/gups-chase.gp (writes plots/out/gups-chase.png)
set terminal pngcairo size 1000,1000 noenhanced font 'Sans,11'
set output 'plots/out/gups-chase.png'
set encoding utf8
set title 'walk cycles: % change against mode = base, per input'
set xlabel 'input'
set ylabel '% change in walk cycles against base'
set key outside right top vertical
set key title 'mode'
set multiplot layout 2,1 title 'walk cycles: % change against mode = base, per input'
unset title
set key inside top left
set ylabel 'walk cycles (millions)'
set yrange [0:48.74730752]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('gups:size=1M,updates=1000000' 0, 'gups:size=4M,updates=1000000' 1, 'gups:size=16M,updates=1000000' 2, 'gups:size=64M,updates=1000000' 3, 'gups:size=256M,updates=1000000' 4, 'chase:size=1M,steps=1000000' 5, 'chase:size=4M,steps=1000000' 6, 'chase:size=16M,steps=1000000' 7, 'chase:size=64M,steps=1000000' 8, 'chase:size=256M,steps=1000000' 9)
set xtics rotate by 30 right
set lmargin 22
$s0 << EOD
-0.2666666667 0.00892 0.30615968 "0.00892"
0.7333333333 2.033956 2.33119568 "2.034"
1.733333333 3.63545 3.93268968 "3.635"
2.733333333 8.882018 9.17925768 "8.882"
3.733333333 29.703766 30.00100568 "29.7"
4.733333333 0.00892 0.30615968 "0.00892"
5.733333333 2.05918 2.35641968 "2.059"
6.733333333 3.63536 3.93259968 "3.635"
7.733333333 8.886576 9.18381568 "8.887"
8.733333333 29.723968 30.02120768 "29.72"
EOD
$s1 << EOD
0 0.00892 0.30615968 "0.00892"
1 0.000612 0.29785168 "0.000612"
2 0.00066 0.29789968 "0.00066"
3 0.00144 0.29867968 "0.00144"
4 3.00684 3.30407968 "3.007"
5 0.00892 0.30615968 "0.00892"
6 0.000612 0.29785168 "0.000612"
7 0.00066 0.29789968 "0.00066"
8 0.00144 0.29867968 "0.00144"
9 3.002104 3.29934368 "3.002"
EOD
$s2 << EOD
0.2666666667 0.00892 0.30615968 "0.00892"
1.266666667 0.000612 0.29785168 "0.000612"
2.266666667 0.00066 0.29789968 "0.00066"
3.266666667 0.00144 0.29867968 "0.00144"
4.266666667 3.00684 3.30407968 "3.007"
5.266666667 0.00892 0.30615968 "0.00892"
6.266666667 0.000612 0.29785168 "0.000612"
7.266666667 0.00066 0.29789968 "0.00066"
8.266666667 0.00144 0.29867968 "0.00144"
9.266666667 3.002104 3.29934368 "3.002"
EOD
plot $s0 using 1:2:(0.2666666667) with boxes lc 1 title 'base', \
     $s1 using 1:2:(0.2666666667) with boxes lc 2 title 'hugetlbfs', \
     $s2 using 1:2:(0.2666666667) with boxes lc 3 title 'thp', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s2 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s2 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset key
unset lmargin
set ylabel '% change in walk cycles against base'
set yrange [-100:50.58003787]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('gups:size=1M,updates=1000000' 0, 'gups:size=4M,updates=1000000' 1, 'gups:size=16M,updates=1000000' 2, 'gups:size=64M,updates=1000000' 3, 'gups:size=256M,updates=1000000' 4, 'chase:size=1M,steps=1000000' 5, 'chase:size=4M,steps=1000000' 6, 'chase:size=16M,steps=1000000' 7, 'chase:size=64M,steps=1000000' 8, 'chase:size=256M,steps=1000000' 9)
set xtics rotate by 30 right
set lmargin 22
$s0 << EOD
-0.2 0 0.9998379578 "+0.00%"
0.8 -99.96991085 -98.9700729 "-99.97%"
1.8 -99.98184544 -98.98200748 "-99.98%"
2.8 -99.98378747 -98.98394951 "-99.98%"
3.8 -89.87724318 -88.87740522 "-89.88%"
4.8 0 0.9998379578 "+0.00%"
5.8 -99.97027943 -98.97044147 "-99.97%"
6.8 -99.98184499 -98.98200703 "-99.98%"
7.8 -99.98379578 -98.98395783 "-99.98%"
8.8 -89.90005641 -88.90021845 "-89.90%"
EOD
$s1 << EOD
0.2 0 0.9998379578 "+0.00%"
1.2 -99.96991085 -98.9700729 "-99.97%"
2.2 -99.98184544 -98.98200748 "-99.98%"
3.2 -99.98378747 -98.98394951 "-99.98%"
4.2 -89.87724318 -88.87740522 "-89.88%"
5.2 0 0.9998379578 "+0.00%"
6.2 -99.97027943 -98.97044147 "-99.97%"
7.2 -99.98184499 -98.98200703 "-99.98%"
8.2 -99.98379578 -98.98395783 "-99.98%"
9.2 -89.90005641 -88.90021845 "-89.90%"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 2 title 'hugetlbfs', \
     $s1 using 1:2:(0.4) with boxes lc 3 title 'thp', \
     $s0 using 1:($2 >= 0 || 1 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !1 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 1 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !1 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset multiplot
