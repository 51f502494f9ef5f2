#!/bin/sh
# virt_measure.sh - `make native-virt`: run tests/native/virt_chase.c's full
# measurement on this machine and keep it, with the machine it ran on, in
#   OUTDIR/virt-native.csv   the CSV (virt_chase.c's header comment says its columns)
#   OUTDIR/virt-native.txt   date, kernel, CPU, hypervisor, THP settings, load
#                            before and after, how busy all CPUs were during the
#                            run (/proc/stat), and every run's number
# Both are written beside and moved into place only when the run succeeded.
#
#   sh tests/native/virt_measure.sh BINARY OUTDIR
set -u
[ $# -eq 2 ] || { echo "usage: virt_measure.sh BINARY OUTDIR" >&2; exit 2; }
BIN=$1
OUT=$2
mkdir -p "$OUT" || exit 1
csv=$OUT/virt-native.csv
txt=$OUT/virt-native.txt
for f in "$csv" "$txt"; do
	if [ -e "$f" ] && [ ! -f "$f" ]; then
		echo "virt_measure.sh: $f exists and is not a regular file" >&2
		exit 2
	fi
done
thp=/sys/kernel/mm/transparent_hugepage
hv=$(dmesg 2>/dev/null | grep -m1 'Hypervisor detected' | sed 's/^\[[^]]*\] //')
[ -n "$hv" ] || hv="(dmesg not readable, or no such line)"
{
	echo "# virt-native.csv: tests/native/virt_chase.c, run by make native-virt"
	echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	echo "kernel: $(uname -r) ($(uname -m))"
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "cpu (/proc/cpuinfo): $model, $(grep -c '^processor' /proc/cpuinfo) CPUs"
	echo "hypervisor (dmesg): $hv"
	echo "memory: $(sed -n 's/^MemTotal:[[:space:]]*//p' /proc/meminfo)"
	echo "THP enabled: $(cat $thp/enabled 2>/dev/null); defrag: $(cat $thp/defrag 2>/dev/null)"
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$txt.tmp" || exit 1
# busy and total jiffies of all CPUs together (/proc/stat's first line)
cpu_jiffies() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat; }
read -r busy0 total0 <<EOT
$(cpu_jiffies)
EOT
if ! "$BIN" >"$csv.tmp" 2>"$txt.runs"; then
	cat "$txt.runs" >&2
	rm -f "$csv.tmp" "$txt.tmp" "$txt.runs"
	exit 1
fi
{
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	read -r busy1 total1 <<EOT
$(cpu_jiffies)
EOT
	awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) -v n="$(grep -c '^processor' /proc/cpuinfo)" \
		'BEGIN { printf "CPUs busy during the run: %.1f %% of %d (the measurement itself keeps one busy: %.1f %%)\n", t ? 100 * b / t : 0, n, 100 / n }'
	echo "per run (stderr of virt_chase):"
	cat "$txt.runs"
} >>"$txt.tmp" && rm -f "$txt.runs" &&
	mv -f "$csv.tmp" "$csv" && mv -f "$txt.tmp" "$txt" || exit 1
cat "$csv"
