# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/mthp.csv -x os.thp_anon -y cycles.fault --by os.fragmentation.unmovable --values --where tlb.coalesce=amd --facet input --size 2000x1000 --kind bars --title 'fault cycles per anonymous THP size, clean and every pageblock pinned' -o plots/out/mthp-fault-cycles.png --script plots/mthp-fault-cycles.gp
# Redraw it with: gnuplot plots/mthp-fault-cycles.gp (writes plots/out/mthp-fault-cycles.png)
set terminal pngcairo size 2000,1000 noenhanced font 'Sans,11'
set output 'plots/out/mthp-fault-cycles.png'
set encoding utf8
set multiplot layout 2,2 title 'fault cycles per anonymous THP size, clean and every pageblock pinned'
set title 'input = stream:size=32M,iterations=2'
set xlabel 'anonymous THP sizes (thp_anon=)'
set ylabel 'fault cycles (millions)'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set yrange [0:13.90278952]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 11.206656 11.31872256 "11.21"
0.8 7.520256 7.63232256 "7.52"
1.8 6.905856 7.01792256 "6.906"
2.8 6.598656 6.71072256 "6.599"
3.8 6.445056 6.55712256 "6.445"
4.8 6.368256 6.48032256 "6.368"
5.8 6.329856 6.44192256 "6.33"
6.8 6.310656 6.42272256 "6.311"
7.8 6.301056 6.41312256 "6.301"
8.8 6.301056 6.41312256 "6.301"
EOD
$s1 << EOD
0.2 11.206656 11.31872256 "11.21"
1.2 7.520256 7.63232256 "7.52"
2.2 6.905856 7.01792256 "6.906"
3.2 6.598656 6.71072256 "6.599"
4.2 6.445056 6.55712256 "6.445"
5.2 6.368256 6.48032256 "6.368"
6.2 6.329856 6.44192256 "6.33"
7.2 6.310656 6.42272256 "6.311"
8.2 11.206656 11.31872256 "11.21"
9.2 6.310656 6.42272256 "6.311"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title '0.0', \
     $s1 using 1:2:(0.4) with boxes lc 2 title '1.0', \
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
set ylabel 'fault cycles (millions)'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set yrange [0:4.634263174]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 3.735552 3.77290752 "3.736"
0.8 2.506752 2.54410752 "2.507"
1.8 2.301952 2.33930752 "2.302"
2.8 2.199552 2.23690752 "2.2"
3.8 2.148352 2.18570752 "2.148"
4.8 2.122752 2.16010752 "2.123"
5.8 2.109952 2.14730752 "2.11"
6.8 2.103552 2.14090752 "2.104"
7.8 2.100352 2.13770752 "2.1"
8.8 2.100352 2.13770752 "2.1"
EOD
$s1 << EOD
0.2 3.735552 3.77290752 "3.736"
1.2 2.506752 2.54410752 "2.507"
2.2 2.301952 2.33930752 "2.302"
3.2 2.199552 2.23690752 "2.2"
4.2 2.148352 2.18570752 "2.148"
5.2 2.122752 2.16010752 "2.123"
6.2 2.109952 2.14730752 "2.11"
7.2 2.103552 2.14090752 "2.104"
8.2 3.735552 3.77290752 "3.736"
9.2 2.103552 2.14090752 "2.104"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title '0.0', \
     $s1 using 1:2:(0.4) with boxes lc 2 title '1.0', \
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
set ylabel 'fault cycles'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set yrange [0:932292.3636]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 94176 100208.48 "9.418e+04"
0.8 94016 100048.48 "9.402e+04"
1.8 99984 106016.48 "9.998e+04"
2.8 110424 116456.48 "1.104e+05"
3.8 119720 125752.48 "1.197e+05"
4.8 144096 150128.48 "1.441e+05"
5.8 176664 182696.48 "1.767e+05"
6.8 274968 281000.48 "2.75e+05"
7.8 603248 609280.48 "6.032e+05"
8.8 600368 606400.48 "6.004e+05"
EOD
$s1 << EOD
0.2 94176 100208.48 "9.418e+04"
1.2 94016 100048.48 "9.402e+04"
2.2 99984 106016.48 "9.998e+04"
3.2 110424 116456.48 "1.104e+05"
4.2 119720 125752.48 "1.197e+05"
5.2 144096 150128.48 "1.441e+05"
6.2 176664 182696.48 "1.767e+05"
7.2 274968 281000.48 "2.75e+05"
8.2 94176 100208.48 "9.418e+04"
9.2 272088 278120.48 "2.721e+05"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title '0.0', \
     $s1 using 1:2:(0.4) with boxes lc 2 title '1.0', \
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
set ylabel 'fault cycles (millions)'
set key outside right top vertical
set key title 'share of pageblocks pinned by an unmovable page'
set yrange [0:2.172708404]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 0.902536 0.91926432 "0.9025"
0.8 0.905664 0.92239232 "0.9057"
1.8 0.910232 0.92696032 "0.9102"
2.8 0.914128 0.93085632 "0.9141"
3.8 0.9298 0.94652832 "0.9298"
4.8 0.925664 0.94239232 "0.9257"
5.8 0.992176 1.00890432 "0.9922"
6.8 1.118984 1.13571232 "1.119"
7.8 1.672664 1.68939232 "1.673"
8.8 1.672832 1.68956032 "1.673"
EOD
$s1 << EOD
0.2 0.902536 0.91926432 "0.9025"
1.2 0.905664 0.92239232 "0.9057"
2.2 0.910232 0.92696032 "0.9102"
3.2 0.914128 0.93085632 "0.9141"
4.2 0.9298 0.94652832 "0.9298"
5.2 0.925664 0.94239232 "0.9257"
6.2 0.992176 1.00890432 "0.9922"
7.2 1.118984 1.13571232 "1.119"
8.2 0.902536 0.91926432 "0.9025"
9.2 1.119152 1.13588032 "1.119"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title '0.0', \
     $s1 using 1:2:(0.4) with boxes lc 2 title '1.0', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset multiplot
