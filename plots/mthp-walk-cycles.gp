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
set yrange [0:51891]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 29580 29876.52 "2.958e+04"
0.8 29088 29384.52 "2.909e+04"
1.8 29108 29404.52 "2.911e+04"
2.8 29120 29416.52 "2.912e+04"
3.8 29316 29612.52 "2.932e+04"
4.8 29312 29608.52 "2.931e+04"
5.8 29308 29604.52 "2.931e+04"
6.8 29308 29604.52 "2.931e+04"
7.8 29400 29696.52 "2.94e+04"
8.8 29096 29392.52 "2.91e+04"
EOD
$s1 << EOD
0.2 29652 29948.52 "2.965e+04"
1.2 29424 29720.52 "2.942e+04"
2.2 29420 29716.52 "2.942e+04"
3.2 29424 29720.52 "2.942e+04"
4.2 29528 29824.52 "2.953e+04"
5.2 29524 29820.52 "2.952e+04"
6.2 29520 29816.52 "2.952e+04"
7.2 29520 29816.52 "2.952e+04"
8.2 29560 29856.52 "2.956e+04"
9.2 29380 29676.52 "2.938e+04"
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
set yrange [0:210049]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 119876 121076.28 "1.199e+05"
0.8 119696 120896.28 "1.197e+05"
1.8 119556 120756.28 "1.196e+05"
2.8 119324 120524.28 "1.193e+05"
3.8 119060 120260.28 "1.191e+05"
4.8 118442 119642.28 "1.184e+05"
5.8 118018 119218.28 "1.18e+05"
6.8 118842 120042.28 "1.188e+05"
7.8 22672 23872.28 "2.267e+04"
8.8 21180 22380.28 "2.118e+04"
EOD
$s1 << EOD
0.2 120028 121228.28 "1.2e+05"
1.2 119860 121060.28 "1.199e+05"
2.2 119784 120984.28 "1.198e+05"
3.2 119564 120764.28 "1.196e+05"
4.2 119344 120544.28 "1.193e+05"
5.2 118816 120016.28 "1.188e+05"
6.2 118448 119648.28 "1.184e+05"
7.2 119104 120304.28 "1.191e+05"
8.2 22736 23936.28 "2.274e+04"
9.2 21436 22636.28 "2.144e+04"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title 'amd', \
     $s1 using 1:2:(0.4) with boxes lc 2 title 'none', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset multiplot
