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
set yrange [0:940946.9091]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 99776 105864.48 "9.978e+04"
0.8 99616 105704.48 "9.962e+04"
1.8 105584 111672.48 "1.056e+05"
2.8 116024 122112.48 "1.16e+05"
3.8 125320 131408.48 "1.253e+05"
4.8 149696 155784.48 "1.497e+05"
5.8 182264 188352.48 "1.823e+05"
6.8 280568 286656.48 "2.806e+05"
7.8 608848 614936.48 "6.088e+05"
8.8 605968 612056.48 "6.06e+05"
EOD
$s1 << EOD
0.2 99776 105864.48 "9.978e+04"
1.2 99616 105704.48 "9.962e+04"
2.2 105584 111672.48 "1.056e+05"
3.2 116024 122112.48 "1.16e+05"
4.2 125320 131408.48 "1.253e+05"
5.2 149696 155784.48 "1.497e+05"
6.2 182264 188352.48 "1.823e+05"
7.2 280568 286656.48 "2.806e+05"
8.2 99776 105864.48 "9.978e+04"
9.2 277688 283776.48 "2.777e+05"
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
set yrange [0:2.174786516]
set xrange [-0.5:9.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('16K-2M:never' 0, '16K:always' 1, '32K:always' 2, '64K:always' 3, '128K:always' 4, '256K:always' 5, '512K:always' 6, '1M:always' 7, '2M:always' 8, '16K-2M:always' 9)
set xtics rotate by 30 right
$s0 << EOD
-0.2 0.904136 0.92088032 "0.9041"
0.8 0.907264 0.92400832 "0.9073"
1.8 0.911832 0.92857632 "0.9118"
2.8 0.915728 0.93247232 "0.9157"
3.8 0.9314 0.94814432 "0.9314"
4.8 0.927264 0.94400832 "0.9273"
5.8 0.993776 1.01052032 "0.9938"
6.8 1.120584 1.13732832 "1.121"
7.8 1.674264 1.69100832 "1.674"
8.8 1.674432 1.69117632 "1.674"
EOD
$s1 << EOD
0.2 0.904136 0.92088032 "0.9041"
1.2 0.907264 0.92400832 "0.9073"
2.2 0.911832 0.92857632 "0.9118"
3.2 0.915728 0.93247232 "0.9157"
4.2 0.9314 0.94814432 "0.9314"
5.2 0.927264 0.94400832 "0.9273"
6.2 0.993776 1.01052032 "0.9938"
7.2 1.120584 1.13732832 "1.121"
8.2 0.904136 0.92088032 "0.9041"
9.2 1.120752 1.13749632 "1.121"
EOD
plot $s0 using 1:2:(0.4) with boxes lc 1 title '0.0', \
     $s1 using 1:2:(0.4) with boxes lc 2 title '1.0', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
unset multiplot
