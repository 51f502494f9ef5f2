# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/mthp.csv -x input -y memory.rss_bytes --by os.thp_anon --where os.fragmentation.unmovable=0 --where tlb.coalesce=amd --size 1400x600 --kind bars --base 16K-2M:never --title 'resident memory against 4 KiB pages only, per anonymous THP size, clean machine' -o plots/out/mthp-rss.png --script plots/mthp-rss.gp
# Redraw it with: gnuplot plots/mthp-rss.gp (writes plots/out/mthp-rss.png)
set terminal pngcairo size 1400,600 noenhanced font 'Sans,11'
set output 'plots/out/mthp-rss.png'
set encoding utf8
set title 'resident memory against 4 KiB pages only, per anonymous THP size, clean machine'
set xlabel 'input'
set ylabel '% change in resident memory against 16K-2M:never'
set key outside right top vertical
set key title 'anonymous THP sizes (thp_anon=)'
set yrange [0:1447.670686]
set xrange [-0.5:3.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('stream:size=32M,iterations=2' 0, 'gups:size=32M,updates=1M' 1, '../../traces/sqlite3.mtr.zst' 2, '../../traces/xz-6.lackey.zst' 3)
$s0 << EOD
-0.3555555556 0 11.60305344 "+0.00%"
0.6444444444 0 11.60305344 "+0.00%"
1.644444444 30.53435115 42.13740458 "+30.53%"
2.644444444 3.561387067 15.1644405 "+3.56%"
EOD
$s1 << EOD
-0.2666666667 0 11.60305344 "+0.00%"
0.7333333333 0 11.60305344 "+0.00%"
1.733333333 51.90839695 63.51145038 "+51.91%"
2.733333333 6.18556701 17.78862045 "+6.19%"
EOD
$s2 << EOD
-0.1777777778 0 11.60305344 "+0.00%"
0.8222222222 0 11.60305344 "+0.00%"
1.822222222 82.44274809 94.04580153 "+82.44%"
2.822222222 10.02811621 21.63116965 "+10.03%"
EOD
$s3 << EOD
-0.08888888889 0 11.60305344 "+0.00%"
0.9111111111 0 11.60305344 "+0.00%"
1.911111111 94.65648855 106.259542 "+94.66%"
2.911111111 18.18181818 29.78487162 "+18.18%"
EOD
$s4 << EOD
0 0 11.60305344 "+0.00%"
1 0 11.60305344 "+0.00%"
2 167.9389313 179.5419847 "+167.94%"
3 22.30552952 33.90858296 "+22.31%"
EOD
$s5 << EOD
0.08888888889 0 11.60305344 "+0.00%"
1.088888889 0 11.60305344 "+0.00%"
2.088888889 265.648855 277.2519084 "+265.65%"
3.088888889 50.60918463 62.21223806 "+50.61%"
EOD
$s6 << EOD
0.1777777778 0 11.60305344 "+0.00%"
1.177777778 0 11.60305344 "+0.00%"
2.177777778 558.778626 570.3816794 "+558.78%"
3.177777778 89.78444236 101.3874958 "+89.78%"
EOD
$s7 << EOD
0.2666666667 0 11.60305344 "+0.00%"
1.266666667 0 11.60305344 "+0.00%"
2.266666667 1145.038168 1156.641221 "+1145.04%"
3.266666667 438.2380506 449.841104 "+438.24%"
EOD
$s8 << EOD
0.3555555556 0 11.60305344 "+0.00%"
1.355555556 0 11.60305344 "+0.00%"
2.355555556 1160.305344 1171.908397 "+1160.31%"
3.355555556 452.5773196 464.180373 "+452.58%"
EOD
plot $s0 using 1:2:(0.08888888889) with boxes lc 1 title '16K:always', \
     $s1 using 1:2:(0.08888888889) with boxes lc 2 title '32K:always', \
     $s2 using 1:2:(0.08888888889) with boxes lc 3 title '64K:always', \
     $s3 using 1:2:(0.08888888889) with boxes lc 4 title '128K:always', \
     $s4 using 1:2:(0.08888888889) with boxes lc 5 title '256K:always', \
     $s5 using 1:2:(0.08888888889) with boxes lc 6 title '512K:always', \
     $s6 using 1:2:(0.08888888889) with boxes lc 7 title '1M:always', \
     $s7 using 1:2:(0.08888888889) with boxes lc 8 title '2M:always', \
     $s8 using 1:2:(0.08888888889) with boxes lc 9 title '16K-2M:always', \
     $s0 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s0 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s1 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s1 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s2 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s2 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s3 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s3 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s4 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s4 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s5 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s5 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s6 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s6 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s7 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s7 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle, \
     $s8 using 1:($2 >= 0 || 0 ? $3 : NaN):4 with labels rotate by 90 left font 'Sans,9' notitle, \
     $s8 using 1:($2 < 0 && !0 ? $3 : NaN):4 with labels rotate by 90 right font 'Sans,9' notitle
