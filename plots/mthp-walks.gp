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
-0.2 574 581.37 "574"
0.8 477 484.37 "477"
1.8 498 505.37 "498"
2.8 499 506.37 "499"
3.8 522 529.37 "522"
4.8 522 529.37 "522"
5.8 522 529.37 "522"
6.8 522 529.37 "522"
7.8 627 634.37 "627"
8.8 582 589.37 "582"
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
-0.2 2285 2308.06 "2285"
0.8 2245 2268.06 "2245"
1.8 2259 2282.06 "2259"
2.8 2231 2254.06 "2231"
3.8 2214 2237.06 "2214"
4.8 2175 2198.06 "2175"
5.8 2149 2172.06 "2149"
6.8 2204 2227.06 "2204"
7.8 702 725.06 "702"
8.8 582 605.06 "582"
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
