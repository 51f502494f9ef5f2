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
set yrange [-26.9184:44.7784]
set xrange [-0.5:7.5]
set grid ytics
set xzeroaxis lt -1
set style fill solid 0.85 border -1
set xtics nomirror scale 0 ('chase 16 MiB' 0, 'chase 64 MiB' 1, 'chase 256 MiB' 2, 'chase 1 GiB' 3, 'gups 16 MiB' 4, 'gups 64 MiB' 5, 'gups 256 MiB' 6, 'gups 1 GiB' 7)
set xtics rotate by 30 right
$s0 << EOD
-0.3428571429 2.25 4.0728 "2.25"
0.6571428571 16.75 18.5728 "16.75"
1.657142857 12.64 14.4628 "12.64"
2.657142857 4.12 5.9428 "4.12"
6.657142857 15.66 17.4828 "15.66"
EOD
$s1 << EOD
-0.2285714286 -0.69 -2.5128 "-0.69"
0.7714285714 18.28 20.1028 "18.28"
1.771428571 20.54 22.3628 "20.54"
2.771428571 9.25 11.0728 "9.25"
6.771428571 39.31 41.1328 "39.31"
EOD
$s2 << EOD
-0.1142857143 -12.91 -14.7328 "-12.91"
0.8857142857 -9.07 -10.8928 "-9.07"
1.885714286 -10.35 -12.1728 "-10.35"
2.885714286 -16.29 -18.1128 "-16.29"
3.885714286 -10.92 -12.7428 "-10.92"
4.885714286 -11.45 -13.2728 "-11.45"
5.885714286 -14.24 -16.0628 "-14.24"
6.885714286 -19.15 -20.9728 "-19.15"
EOD
$s3 << EOD
0 0 1.8228 "0"
1 -0 1.8228 "-0"
2 -0.52 -2.3428 "-0.52"
3 -0.02 -1.8428 "-0.02"
4 0 1.8228 "0"
5 -0.04 -1.8628 "-0.04"
6 -0.02 -1.8428 "-0.02"
7 -0 1.8228 "-0"
EOD
$s4 << EOD
0.1142857143 -12.91 -14.7328 "-12.91"
1.114285714 -9.08 -10.9028 "-9.08"
2.114285714 -10.83 -12.6528 "-10.83"
3.114285714 -18.92 -20.7428 "-18.92"
4.114285714 -10.92 -12.7428 "-10.92"
5.114285714 -11.56 -13.3828 "-11.56"
6.114285714 -16.14 -17.9628 "-16.14"
7.114285714 -19.88 -21.7028 "-19.88"
EOD
$s5 << EOD
0.2285714286 0 1.8228 "0"
1.228571429 -4.66 -6.4828 "-4.66"
2.228571429 -7.14 -8.9628 "-7.14"
3.228571429 -18.26 -20.0828 "-18.26"
4.228571429 0 1.8228 "0"
5.228571429 -4.84 -6.6628 "-4.84"
6.228571429 -13.57 -15.3928 "-13.57"
7.228571429 -17.11 -18.9328 "-17.11"
EOD
$s6 << EOD
0.3428571429 -12.91 -14.7328 "-12.91"
1.342857143 -10.82 -12.6428 "-10.82"
2.342857143 -13.01 -14.8328 "-13.01"
3.342857143 -18.84 -20.6628 "-18.84"
4.342857143 -10.92 -12.7428 "-10.92"
5.342857143 -13.1 -14.9228 "-13.1"
6.342857143 -16.61 -18.4328 "-16.61"
7.342857143 -21.45 -23.2728 "-21.45"
EOD
plot $s0 using 1:2:(0.1142857143) with boxes lc 1 title 'measured (median of sessions)', \
     $s1 using 1:2:(0.1142857143) with boxes lc 2 title 'measured (one session)', \
     $s2 using 1:2:(0.1142857143) with boxes lc 3 title 'bare metal', \
     $s3 using 1:2:(0.1142857143) with boxes lc 4 title 'shadow (host 4K)', \
     $s4 using 1:2:(0.1142857143) with boxes lc 5 title 'shadow (host THP)', \
     $s5 using 1:2:(0.1142857143) with boxes lc 6 title 'nested (host 4K)', \
     $s6 using 1:2:(0.1142857143) with boxes lc 7 title 'nested (host THP)'
