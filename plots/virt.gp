# Written by mmusim plot --script, the data inline. Made by:
#   mmusim plot plots/out/virt-change.csv -x case -y '% change in time per step' --by setup --values --kind bars --title 'guest THP against guest 4 KiB pages, by how the guest runs' -o plots/out/virt.png --script plots/virt.gp
# Redraw it with: gnuplot plots/virt.gp (writes plots/out/virt.png)
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'plots/out/virt.png'
set encoding utf8
set title 'guest THP against guest 4 KiB pages, by how the guest runs'
set xlabel 'case'
set ylabel '% change in time per step'
set key outside right top vertical
set key title 'setup'
set yrange [-18.4382:44.0782]
set xrange [-0.5:7.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('chase 16 MiB' 0, 'chase 64 MiB' 1, 'chase 256 MiB' 2, 'chase 1 GiB' 3, 'gups 16 MiB' 4, 'gups 64 MiB' 5, 'gups 256 MiB' 6, 'gups 1 GiB' 7)
set xtics rotate by 30 right
$s0 << EOD
-0.3428571429 2.25 3.8394 "2.25"
0.6571428571 16.75 18.3394 "16.75"
1.657142857 12.64 14.2294 "12.64"
2.657142857 4.12 5.7094 "4.12"
6.657142857 15.66 17.2494 "15.66"
EOD
$s1 << EOD
-0.2285714286 -0.69 -2.2794 "-0.69"
0.7714285714 18.28 19.8694 "18.28"
1.771428571 20.54 22.1294 "20.54"
2.771428571 9.25 10.8394 "9.25"
6.771428571 39.31 40.8994 "39.31"
EOD
$s2 << EOD
-0.1142857143 -13 -14.5894 "-13"
0.8857142857 -2.05 -3.6394 "-2.05"
1.885714286 -4.45 -6.0394 "-4.45"
2.885714286 -8.16 -9.7494 "-8.16"
3.885714286 -11.96 -13.5494 "-11.96"
4.885714286 -3.15 -4.7394 "-3.15"
5.885714286 -7.03 -8.6194 "-7.03"
6.885714286 -11.03 -12.6194 "-11.03"
EOD
$s3 << EOD
0 -0.01 -1.5994 "-0.01"
1 0.32 1.9094 "0.32"
2 -0.13 -1.7194 "-0.13"
3 0.02 1.6094 "0.02"
4 0.22 1.8094 "0.22"
5 0.39 1.9794 "0.39"
6 0.08 1.6694 "0.08"
7 0.03 1.6194 "0.03"
EOD
$s4 << EOD
0.1142857143 -13.23 -14.8194 "-13.23"
1.114285714 -2.07 -3.6594 "-2.07"
2.114285714 -4.69 -6.2794 "-4.69"
3.114285714 -9.54 -11.1294 "-9.54"
4.114285714 -11.96 -13.5494 "-11.96"
5.114285714 -3.21 -4.7994 "-3.21"
6.114285714 -8 -9.5894 "-8"
7.114285714 -11.43 -13.0194 "-11.43"
EOD
$s5 << EOD
0.2285714286 0 1.5894 "0"
1.228571429 -2.26 -3.8494 "-2.26"
2.228571429 -3.71 -5.2994 "-3.71"
3.228571429 -10.08 -11.6694 "-10.08"
4.228571429 0 1.5894 "0"
5.228571429 -3.03 -4.6194 "-3.03"
6.228571429 -7.65 -9.2394 "-7.65"
7.228571429 -10.69 -12.2794 "-10.69"
EOD
$s6 << EOD
0.3428571429 -13.67 -15.2594 "-13.67"
1.342857143 -4.97 -6.5594 "-4.97"
2.342857143 -6.26 -7.8494 "-6.26"
3.342857143 -9.62 -11.2094 "-9.62"
4.342857143 -12.76 -14.3494 "-12.76"
5.342857143 -7.47 -9.0594 "-7.47"
6.342857143 -8.76 -10.3494 "-8.76"
7.342857143 -12.43 -14.0194 "-12.43"
EOD
plot $s0 using 1:2:(0.1142857143) with boxes lc 1 title 'measured (median of sessions)', \
     $s1 using 1:2:(0.1142857143) with boxes lc 2 title 'measured (one session)', \
     $s2 using 1:2:(0.1142857143) with boxes lc 3 title 'bare metal', \
     $s3 using 1:2:(0.1142857143) with boxes lc 4 title 'shadow (host 4K)', \
     $s4 using 1:2:(0.1142857143) with boxes lc 5 title 'shadow (host THP)', \
     $s5 using 1:2:(0.1142857143) with boxes lc 6 title 'nested (host 4K)', \
     $s6 using 1:2:(0.1142857143) with boxes lc 7 title 'nested (host THP)'
