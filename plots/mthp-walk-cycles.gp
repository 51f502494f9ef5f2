# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/mthp.csv -x os.thp_anon -y walk.cycles --by tlb.coalesce --values --where os.fragmentation.unmovable=0 --facet input --size 1400x900 --kind bars --title 'walk cycles per anonymous THP size, coalescing on and off, clean machine' -o plots/out/mthp-walk-cycles.png --script plots/mthp-walk-cycles.gp
# Redraw it with: gnuplot plots/mthp-walk-cycles.gp (writes plots/out/mthp-walk-cycles.png)
set terminal pngcairo size 1400,900 noenhanced font 'Sans,11'
set output 'plots/out/mthp-walk-cycles.png'
set encoding utf8
set multiplot layout 2,2 title 'walk cycles per anonymous THP size, coalescing on and off, clean machine'
set title 'input = stream:size=32M,iterations=2'
set xlabel 'anonymous THP sizes (thp_anon=)'
set ylabel 'walk cycles (millions)'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:1.602245408]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 1.05904 1.0696304 "1.059"
0.8 0.764128 0.7747184 "0.7641"
1.8 0.75184 0.7624304 "0.7518"
2.8 0.745696 0.7562864 "0.7457"
3.8 0.742624 0.7532144 "0.7426"
4.8 0.741088 0.7516784 "0.7411"
5.8 0.74032 0.7509104 "0.7403"
6.8 0.739936 0.7505264 "0.7399"
7.8 0.00196 0.0125504 "0.00196"
8.8 0.00196 0.0125504 "0.00196"
EOD
$s1 << EOD
0.2 1.05904 1.0696304 "1.059"
1.2 0.985312 0.9959024 "0.9853"
2.2 0.973024 0.9836144 "0.973"
3.2 0.96688 0.9774704 "0.9669"
4.2 0.963808 0.9743984 "0.9638"
5.2 0.962272 0.9728624 "0.9623"
6.2 0.961504 0.9720944 "0.9615"
7.2 0.96112 0.9717104 "0.9611"
8.2 0.00196 0.0125504 "0.00196"
9.2 0.00196 0.0125504 "0.00196"
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
set ylabel 'walk cycles (millions)'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:9.758443702]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 0.280748 0.34524862 "0.2807"
0.8 0.217944 0.28244462 "0.2179"
1.8 0.213848 0.27834862 "0.2138"
2.8 0.2118 0.27630062 "0.2118"
3.8 0.210776 0.27527662 "0.2108"
4.8 0.210264 0.27476462 "0.2103"
5.8 0.210008 0.27450862 "0.21"
6.8 0.20988 0.27438062 "0.2099"
7.8 0.00092 0.06542062 "0.00092"
8.8 0.00092 0.06542062 "0.00092"
EOD
$s1 << EOD
0.2 6.450062 6.51456262 "6.45"
1.2 6.425486 6.48998662 "6.425"
2.2 6.42139 6.48589062 "6.421"
3.2 6.419342 6.48384262 "6.419"
4.2 6.418318 6.48281862 "6.418"
5.2 6.417806 6.48230662 "6.418"
6.2 6.41755 6.48205062 "6.418"
7.2 6.417422 6.48192262 "6.417"
8.2 0.00092 0.06542062 "0.00092"
9.2 0.00092 0.06542062 "0.00092"
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
set ylabel 'walk cycles'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:52087]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 29540 29837.64 "2.954e+04"
0.8 28904 29201.64 "2.89e+04"
1.8 28980 29277.64 "2.898e+04"
2.8 28988 29285.64 "2.899e+04"
3.8 29184 29481.64 "2.918e+04"
4.8 29180 29477.64 "2.918e+04"
5.8 29176 29473.64 "2.918e+04"
6.8 29176 29473.64 "2.918e+04"
7.8 29224 29521.64 "2.922e+04"
8.8 28868 29165.64 "2.887e+04"
EOD
$s1 << EOD
0.2 29764 30061.64 "2.976e+04"
1.2 29536 29833.64 "2.954e+04"
2.2 29532 29829.64 "2.953e+04"
3.2 29536 29833.64 "2.954e+04"
4.2 29640 29937.64 "2.964e+04"
5.2 29636 29933.64 "2.964e+04"
6.2 29632 29929.64 "2.963e+04"
7.2 29632 29929.64 "2.963e+04"
8.2 29672 29969.64 "2.967e+04"
9.2 29492 29789.64 "2.949e+04"
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
set ylabel 'walk cycles'
set key outside right top vertical
set key title 'TLB coalescing'
set yrange [0:210105]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 119972 121172.6 "1.2e+05"
0.8 119592 120792.6 "1.196e+05"
1.8 119580 120780.6 "1.196e+05"
2.8 119268 120468.6 "1.193e+05"
3.8 119004 120204.6 "1.19e+05"
4.8 118386 119586.6 "1.184e+05"
5.8 117962 119162.6 "1.18e+05"
6.8 118786 119986.6 "1.188e+05"
7.8 22504 23704.6 "2.25e+04"
8.8 20952 22152.6 "2.095e+04"
EOD
$s1 << EOD
0.2 120060 121260.6 "1.201e+05"
1.2 119892 121092.6 "1.199e+05"
2.2 119816 121016.6 "1.198e+05"
3.2 119596 120796.6 "1.196e+05"
4.2 119376 120576.6 "1.194e+05"
5.2 118848 120048.6 "1.188e+05"
6.2 118480 119680.6 "1.185e+05"
7.2 119136 120336.6 "1.191e+05"
8.2 22768 23968.6 "2.277e+04"
9.2 21468 22668.6 "2.147e+04"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'amd', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'none', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset multiplot
