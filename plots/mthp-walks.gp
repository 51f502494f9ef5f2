# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/mthp.csv -x os.thp_anon -y walk.walks --by tlb.coalesce --values --where os.fragmentation.unmovable=0 --facet input --size 1400x900 --kind bars --title 'page walks per anonymous THP size, coalescing on and off, clean machine' -o plots/out/mthp-walks.png --script plots/mthp-walks.gp
# Redraw it with: gnuplot plots/mthp-walks.gp (writes plots/out/mthp-walks.png)
set terminal pngcairo size 1400,900 noenhanced font 'Sans,11'
set output 'plots/out/mthp-walks.png'
set encoding utf8
set multiplot layout 2,2 title 'page walks per anonymous THP size, coalescing on and off, clean machine'
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
7.8 48 785.28 "48"
8.8 48 785.28 "48"
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
8.2 48 785.28 "48"
9.2 48 785.28 "48"
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
-0.2 9385 16017.86 "9385"
0.8 2048 8680.86 "2048"
1.8 2048 8680.86 "2048"
2.8 2048 8680.86 "2048"
3.8 2048 8680.86 "2048"
4.8 2048 8680.86 "2048"
5.8 2048 8680.86 "2048"
6.8 2048 8680.86 "2048"
7.8 16 6648.86 "16"
8.8 16 6648.86 "16"
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
8.2 16 6648.86 "16"
9.2 16 6648.86 "16"
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
set yrange [0:873.8855989]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 613 620.37 "613"
0.8 549 556.37 "549"
1.8 556 563.37 "556"
2.8 558 565.37 "558"
3.8 581 588.37 "581"
4.8 581 588.37 "581"
5.8 581 588.37 "581"
6.8 581 588.37 "581"
7.8 697 704.37 "697"
8.8 665 672.37 "665"
EOD
$s1 << EOD
0.2 630 637.37 "630"
1.2 629 636.37 "629"
2.2 630 637.37 "630"
3.2 630 637.37 "630"
4.2 630 637.37 "630"
5.2 630 637.37 "630"
6.2 630 637.37 "630"
7.2 630 637.37 "630"
8.2 737 744.37 "737"
9.2 736 743.37 "736"
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
-0.2 2269 2292.06 "2269"
0.8 2278 2301.06 "2278"
1.8 2262 2285.06 "2262"
2.8 2252 2275.06 "2252"
3.8 2235 2258.06 "2235"
4.8 2196 2219.06 "2196"
5.8 2170 2193.06 "2170"
6.8 2225 2248.06 "2225"
7.8 751 774.06 "751"
8.8 646 669.06 "646"
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
8.2 767 790.06 "767"
9.2 706 729.06 "706"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'amd', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'none', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset multiplot
