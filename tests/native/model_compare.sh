#!/bin/sh
# model_compare.sh - `make native-model`: this machine's time per step against the
# model's, on the same shapes. Runs
#   VIRT_CHASE --model                      the native side (tests/native/virt_chase.c:
#                                           the clock row, chase and GUPS at 64M, 256M,
#                                           1G, the STREAM triad; 4K and thp; median of 5)
#   MMUSIM sweep configs/experiments/native-model.yaml
#                                           the model side (overlap core, zen5.yaml,
#                                           virt.mode shadow; that file says what a step is)
# and keeps, in OUTDIR:
#   native-model.csv  workload,footprint,pages,native_ns,model_cycles,model_ns,model_over_native,
#                     clock_ghz
#                     (model_cycles: cycles.total / steps; model_ns = model_cycles / clock_ghz;
#                     model_over_native = model_ns / native_ns)
#   native-model.md   the same as a Markdown table, with the chase/GUPS ratios, for the README
#   native-model.txt  date, kernel, CPU, hypervisor, THP settings, load, the clock and every
#                     native run (virt_chase's stderr)
# The clock: virt_chase's "clock" row is a chase resident in the L1D and the L1 DTLB, whose
# step is the core's load-to-use latency, cache.l1d.latency cycles in configs/zen5.yaml (4);
# clock_ghz = that latency / its ns per step, measured in the same session (the guest's
# /proc/cpuinfo MHz is the TSC rate, not the core clock, and the host may change the clock
# between sessions). NATIVE_CSV=FILE uses an earlier native CSV instead of measuring (its
# .txt record is then not rewritten), SIM_CSV=FILE an earlier sweep CSV.
#
#   sh tests/native/model_compare.sh VIRT_CHASE MMUSIM OUTDIR
set -u
[ $# -eq 3 ] || { echo "usage: model_compare.sh VIRT_CHASE MMUSIM OUTDIR" >&2; exit 2; }
BIN=$1
SIM=$2
OUT=$3
SWEEP=configs/experiments/native-model.yaml
mkdir -p "$OUT" || exit 1
csv=$OUT/native-model.csv
md=$OUT/native-model.md
txt=$OUT/native-model.txt
for f in "$csv" "$md" "$txt"; do
	if [ -e "$f" ] && [ ! -f "$f" ]; then
		echo "model_compare.sh: $f exists and is not a regular file" >&2
		exit 2
	fi
done
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# the native side
if [ -n "${NATIVE_CSV:-}" ]; then
	cp "$NATIVE_CSV" "$T/native.csv" || exit 1
else
	thp=/sys/kernel/mm/transparent_hugepage
	hv=$(dmesg 2>/dev/null | grep -m1 'Hypervisor detected' | sed 's/^\[[^]]*\] //')
	[ -n "$hv" ] || hv="(dmesg not readable, or no such line)"
	{
		echo "# native-model.csv: make native-model (tests/native/model_compare.sh)"
		echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
		echo "kernel: $(uname -r) ($(uname -m))"
		model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
		echo "cpu (/proc/cpuinfo): $model, $(grep -c '^processor' /proc/cpuinfo) CPUs, $(sed -n 's/^cpu MHz[[:space:]]*: //p' /proc/cpuinfo | head -1) MHz (the TSC rate)"
		echo "hypervisor (dmesg): $hv"
		echo "memory: $(sed -n 's/^MemTotal:[[:space:]]*//p' /proc/meminfo)"
		echo "THP enabled: $(cat $thp/enabled 2>/dev/null); defrag: $(cat $thp/defrag 2>/dev/null)"
		echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$T/txt" || exit 1
	if ! "$BIN" --model >"$T/native.csv" 2>"$T/runs"; then
		cat "$T/runs" >&2
		exit 1
	fi
	{
		echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "per run (stderr of virt_chase --model):"
		cat "$T/runs"
	} >>"$T/txt" || exit 1
fi

# the model side
if [ -n "${SIM_CSV:-}" ]; then
	cp "$SIM_CSV" "$T/sim.csv" || exit 1
elif ! "$SIM" sweep "$SWEEP" -j 1 --quiet -o "$T/sim.csv"; then
	echo "model_compare.sh: mmusim sweep $SWEEP failed" >&2
	exit 1
fi
lat=$("$SIM" config show -c configs/zen5.yaml |
	awk '/^cache:/ { c = 1 } c && /^  l1d:/ { sub(/.*latency: /, ""); sub(/[,} ].*/, ""); print; exit }')
[ -n "$lat" ] || { echo "model_compare.sh: no cache.l1d.latency in configs/zen5.yaml" >&2; exit 1; }

# join: the sweep's rows by workload and size, the native rows by workload, footprint, pages
dram=$("$SIM" config show -c configs/zen5.yaml | awk '/^  dram_latency:/ { print $2; exit }')
dbw=$("$SIM" config show -c configs/zen5.yaml | awk '/^  dram_bandwidth:/ { print $2; exit }')
cpi=$("$SIM" config show -c configs/zen5.yaml | sed -n 's/^cpu: .*[{ ]cpi: \([0-9.]*\).*/\1/p')
# the sweep CSV quotes its input columns, which hold commas: make those commas ;
awk '{ n = split($0, a, "\""); s = a[1]; for (i = 2; i <= n; i++) { if (i % 2 == 0) gsub(/,/, ";", a[i]); s = s a[i] }; print s }' \
	"$T/sim.csv" >"$T/simu.csv" || exit 1
awk -F, -v lat="$lat" -v dram="$dram" -v dbw="$dbw" -v cpi="$cpi" -v csv="$T/csv" -v md="$T/md" '
function bytes(s,   n, u) {
	n = s + 0; u = substr(s, length(s))
	return u == "K" ? n * 1024 : u == "M" ? n * 1048576 : u == "G" ? n * 1073741824 : n
}
function mib(b) { return b >= 1073741824 ? (b / 1073741824) " GiB" : (b / 1048576) " MiB" }
FNR == 1 { for (i = 1; i <= NF; i++) col[FILENAME, $i] = i; next }
FILENAME ~ /native.csv$/ {
	if ($1 == "clock") { ghz = lat / $4; clock_ns = $4; next }
	if ($1 == "memlat") { memlat = $4; next }
	if ($1 == "bw") { bw = $4; next }
	if ($1 == "triadl1") { triadl1 = $4; next }
	nat[$1 "," $2 "," $3] = $4; order[++n] = $1 "," $2 "," $3; next
}
{
	# run.input_id, "workload:WL:size=S,..." (its commas are ; here: unquote below)
	id = $col[FILENAME, "run.input_id"]; mode = $col[FILENAME, "os.mode"]
	split(id, p, /[:=;]/)
	wl = p[2]; size = bytes(p[4])
	steps = wl == "chase" ? $col[FILENAME, "refs.load"] : wl == "gups" ? $col[FILENAME, "refs.modify"] : $col[FILENAME, "refs.load"] / 2
	k = wl "," size "," (mode == "base" ? "4K" : "thp")
	cyc[k] = $col[FILENAME, "cycles.total"] / steps
}
END {
	if (!ghz) { print "model_compare.sh: no clock row in the native CSV" > "/dev/stderr"; exit 1 }
	print "workload,footprint,pages,native_ns,model_cycles,model_ns,model_over_native,clock_ghz" > csv
	printf "| shape | pages | native ns/step | model ns/step | model / native |\n|---|---|---|---|---|\n" > md
	for (i = 1; i <= n; i++) {
		k = order[i]
		if (!(k in cyc)) { print "model_compare.sh: no model row for " k > "/dev/stderr"; exit 1 }
		ns = cyc[k] / ghz; r = ns / nat[k]; split(k, f, ",")
		printf "%s,%.2f,%.2f,%.2f,%.3f,%.3f\n", k, nat[k], cyc[k], ns, r, ghz > csv
		printf "| %s %s | %s | %.2f | %.2f | %.2f%s |\n", f[1], mib(f[2]), f[3], nat[k], ns, r, (r < 0.75 || r > 1.25) ? " (outside 25 %)" : "" > md
		mns[k] = ns
	}
	for (i = 1; i <= n; i++) {
		split(order[i], f, ",")
		g = "gups," f[2] "," f[3]
		if (f[1] != "chase" || !(g in nat)) continue
		rn = nat[order[i]] / nat[g]; rm = mns[order[i]] / mns[g]
		printf "| chase / GUPS %s | %s | %.2f | %.2f | %.2f%s |\n", mib(f[2]), f[3], rn, rm, rm / rn, (rm / rn < 0.75 || rm / rn > 1.25) ? " (outside 25 %)" : "" > md
	}
	if (memlat)
		printf "\nmemory latency (memlat: a chase through every line of 12 MiB, TLB-resident, past the last-level cache): %.2f ns = %.0f cycles at that clock; configs/zen5.yaml cache.dram_latency: %d\n", memlat, memlat * ghz, dram > md
	if (bw)
		printf "\nmemory bandwidth (bw: a sequential read of 256 MiB): %.3f ns per 64-byte line = %.2f GB/s = %.2f bytes a cycle at that clock; configs/zen5.yaml cache.dram_bandwidth: %s\n", bw, 64 / bw, 64 / (bw * ghz), dbw > md
	if (triadl1)
		printf "\nbase CPI (triadl1: the triad on three L1D-resident arrays of 8 KiB): %.4f ns per element = %.3f cycles / 7 instructions = %.3f; configs/zen5.yaml cpu.cpi: %s\n", triadl1, triadl1 * ghz, triadl1 * ghz / 7, cpi > md
	printf "\nclock: %.3f GHz (%d cycles of L1D load-to-use / %.3f ns per step of the L1-resident chase); model: cpu.model overlap, configs/zen5.yaml, virt.mode shadow (configs/experiments/native-model.yaml)\n", ghz, lat, clock_ns > md
}' "$T/native.csv" "$T/simu.csv" || exit 1
if [ -z "${NATIVE_CSV:-}" ]; then
	mv -f "$T/txt" "$txt" || exit 1
fi
mv -f "$T/csv" "$csv" && mv -f "$T/md" "$md" || exit 1
cat "$md"
