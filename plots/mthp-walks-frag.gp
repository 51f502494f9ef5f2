# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/mthp.csv -x os.thp_anon -y walk.walks --by tlb.coalesce --values --where os.fragmentation.unmovable=1 --facet input --size 1400x900 --kind bars --title 'page walks per anonymous THP size, coalescing on and off, every pageblock pinned' -o plots/out/mthp-walks-frag.png --script plots/mthp-walks-frag.gp
# Redraw it with: gnuplot plots/mthp-walks-frag.gp (writes plots/out/mthp-walks-frag.png)
set terminal pngcairo size 1400,900 noenhanced font 'Sans,11'
set output 'plots/out/mthp-walks-frag.png'
set encoding utf8
set multiplot layout 2,2 title 'page walks per anonymous THP size, coalescing on and off, every pageblock pinned'
set title 'input = stream:size=32M,iterations=2'
set xlabel 'anonymous THP sizes (thp_anon=)'
set ylabel 'page walks'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:129024]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 73728 74465.28 "7.373e+04"
0.8 18432 19169.28 "1.843e+04"
1.8 18432 19169.28 "1.843e+04"
2.8 18432 19169.28 "1.843e+04"
3.8 18432 19169.28 "1.843e+04"
4.8 18432 19169.28 "1.843e+04"
5.8 18432 19169.28 "1.843e+04"
6.8 18432 19169.28 "1.843e+04"
7.8 73728 74465.28 "7.373e+04"
8.8 18432 19169.28 "1.843e+04"
EOD
$s1 << EOD
0.2 73728 74465.28 "7.373e+04"
1.2 73728 74465.28 "7.373e+04"
2.2 73728 74465.28 "7.373e+04"
3.2 73728 74465.28 "7.373e+04"
4.2 73728 74465.28 "7.373e+04"
5.2 73728 74465.28 "7.373e+04"
6.2 73728 74465.28 "7.373e+04"
7.2 73728 74465.28 "7.373e+04"
8.2 73728 74465.28 "7.373e+04"
9.2 73728 74465.28 "7.373e+04"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'amd', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'none', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
set autoscale
unset logscale
unset offsets
unset lmargin
unset grid
set xtics norotate autofreq
set title 'input = gups:size=32M,updates=1M'
set xlabel 'anonymous THP sizes (thp_anon=)'
set ylabel 'page walks'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:1160750.5]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 299629 306261.86 "2.996e+05"
0.8 2048 8680.86 "2048"
1.8 2048 8680.86 "2048"
2.8 2048 8680.86 "2048"
3.8 2048 8680.86 "2048"
4.8 2048 8680.86 "2048"
5.8 2048 8680.86 "2048"
6.8 2048 8680.86 "2048"
7.8 299629 306261.86 "2.996e+05"
8.8 2048 8680.86 "2048"
EOD
$s1 << EOD
0.2 663286 669918.86 "6.633e+05"
1.2 663286 669918.86 "6.633e+05"
2.2 663286 669918.86 "6.633e+05"
3.2 663286 669918.86 "6.633e+05"
4.2 663286 669918.86 "6.633e+05"
5.2 663286 669918.86 "6.633e+05"
6.2 663286 669918.86 "6.633e+05"
7.2 663286 669918.86 "6.633e+05"
8.2 663286 669918.86 "6.633e+05"
9.2 663286 669918.86 "6.633e+05"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'amd', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'none', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
set autoscale
unset logscale
unset offsets
unset lmargin
unset grid
set xtics norotate autofreq
set title 'input = sqlite3.mtr.zst'
set xlabel 'anonymous THP sizes (thp_anon=)'
set ylabel 'page walks'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:747.0121131]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 512 518.3 "512"
0.8 506 512.3 "506"
1.8 533 539.3 "533"
2.8 547 553.3 "547"
3.8 556 562.3 "556"
4.8 538 544.3 "538"
5.8 492 498.3 "492"
6.8 557 563.3 "557"
7.8 512 518.3 "512"
8.8 539 545.3 "539"
EOD
$s1 << EOD
0.2 630 636.3 "630"
1.2 629 635.3 "629"
2.2 630 636.3 "630"
3.2 630 636.3 "630"
4.2 630 636.3 "630"
5.2 630 636.3 "630"
6.2 630 636.3 "630"
7.2 630 636.3 "630"
8.2 630 636.3 "630"
9.2 629 635.3 "629"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'amd', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'none', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
set autoscale
unset logscale
unset offsets
unset lmargin
unset grid
set xtics norotate autofreq
set title 'input = xz-6.lackey.zst'
set xlabel 'anonymous THP sizes (thp_anon=)'
set ylabel 'page walks'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:2873.215227]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 2291 2314.06 "2291"
0.8 2240 2263.06 "2240"
1.8 2236 2259.06 "2236"
2.8 2232 2255.06 "2232"
3.8 2211 2234.06 "2211"
4.8 2161 2184.06 "2161"
5.8 2130 2153.06 "2130"
6.8 2203 2226.06 "2203"
7.8 2291 2314.06 "2291"
8.8 2087 2110.06 "2087"
EOD
$s1 << EOD
0.2 2306 2329.06 "2306"
1.2 2302 2325.06 "2302"
2.2 2299 2322.06 "2299"
3.2 2288 2311.06 "2288"
4.2 2277 2300.06 "2277"
5.2 2250 2273.06 "2250"
6.2 2232 2255.06 "2232"
7.2 2265 2288.06 "2265"
8.2 2306 2329.06 "2306"
9.2 2203 2226.06 "2203"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'amd', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'none', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset multiplot
