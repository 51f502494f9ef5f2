# virt.awk - the table plots/virt.gp draws (make figure-virt): for each workload and footprint,
# the % change in time per step that guest THP brings against guest 4 KiB pages, measured on this
# machine (plots/data/virt-native.csv, ns per step) and predicted by each setup of the
# configs/experiments/virt.yaml sweep (its CSV: total cycles of the counted region; equal steps
# in both modes, so the ratio of totals is the ratio of times per step).
# Usage: awk -f plots/virt.awk plots/data/virt-native.csv plots/out/virt.csv > virt-change.csv
# POSIX awk (mawk, gawk): CSV fields may be "quoted, with commas".

# Split the CSV line $0 into f[1..n]; returns n.
function csv(line, f,    n, s, q) {
	n = 0
	while (length(line) > 0) {
		if (substr(line, 1, 1) == "\"") {
			s = ""
			line = substr(line, 2)
			while ((q = index(line, "\"")) > 0) {
				s = s substr(line, 1, q - 1)
				line = substr(line, q + 1)
				if (substr(line, 1, 1) != "\"")
					break
				s = s "\""
				line = substr(line, 2)
			}
			f[++n] = s
			line = substr(line, 2)	# the comma
		} else if ((q = index(line, ",")) > 0) {
			f[++n] = substr(line, 1, q - 1)
			line = substr(line, q + 1)
			if (line == "")
				f[++n] = ""
		} else {
			f[++n] = line
			line = ""
		}
	}
	return n
}

# 16777216 -> "16M", 1073741824 -> "1G"
function size_name(b) {
	if (b >= 1073741824 && b % 1073741824 == 0)
		return (b / 1073741824) "G"
	return (b / 1048576) "M"
}

function setup_name(v, h) {
	if (v == "none")
		return "bare metal"
	return v " (host " (h == "thp" ? "THP" : "4K") ")"
}

function pct(a, b) {
	return sprintf("%.2f", 100.0 * (a - b) / b)
}

BEGIN {
	print "case,setup,thp_change_pct"
	file = 0
}

FNR == 1 {
	file++
	n = csv($0, h)
	for (i = 1; i <= n; i++)
		col[file, h[i]] = i
	next
}

file == 1 {	# the native measurement: workload,footprint,pages,ns_per_step,...
	csv($0, f)
	c = f[col[1, "workload"]] " " size_name(f[col[1, "footprint"]] + 0)
	t[c, "native (measured)", f[col[1, "pages"]] == "thp" ? "thp" : "base"] = f[col[1, "ns_per_step"]] + 0
	next
}

{	# the sweep's CSV
	csv($0, f)
	v = f[col[2, "virt.mode"]]
	hm = f[col[2, "host.os.mode"]]
	if (v == "none" && hm != "base")
		next	# (the host does not exist on bare metal: one of the two equal points)
	split(f[col[2, "input"]], w, ":")
	spec = f[col[2, "input"]]
	sz = spec
	sub(/.*size=/, "", sz)
	sub(/,.*/, "", sz)
	c = w[1] " " sz
	s = setup_name(v, hm)
	t[c, s, f[col[2, "os.mode"]]] = f[col[2, "cycles.total"]] + 0
	if (!(c in seen_case)) {
		seen_case[c] = 1
		cases[++nc] = c
	}
	if (!(s in seen_setup)) {
		seen_setup[s] = 1
		setups[++ns] = s
	}
}

# Rows in the sweep's order of cases; in each, the measurement first, then the setups.
END {
	for (k = 1; k <= nc; k++)
		for (j = 0; j <= ns; j++) {
			s = j ? setups[j] : "native (measured)"
			if (((cases[k], s, "thp") in t) && ((cases[k], s, "base") in t))
				printf "%s,%s,%s\n", cases[k], s, pct(t[cases[k], s, "thp"], t[cases[k], s, "base"])
		}
}
