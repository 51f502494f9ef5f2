# virt.awk - the table plots/virt.gp draws (make figure-virt): for each workload and footprint,
# the % change in time per step that guest THP brings against guest 4 KiB pages, measured on this
# machine and predicted by each setup of the configs/experiments/virt.yaml sweep (its CSV: total
# cycles of the counted region; equal steps in both modes, so the ratio of totals is the ratio of
# times per step). Measured: plots/data/virt-native.csv (one session, the median of 5 runs per
# row) and plots/data/virt-native-sessions.csv (ten sessions: the median of their changes, since
# this guest's times move up to 2x between sessions; plots/data/README.md).
# Usage: awk -f plots/virt.awk plots/data/virt-native.csv plots/data/virt-native-sessions.csv \
#            plots/out/virt.csv > virt-change.csv
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

# 16777216 -> "16 MiB", 1073741824 -> "1 GiB"
function size_name(b) {
	if (b >= 1073741824 && b % 1073741824 == 0)
		return (b / 1073741824) " GiB"
	return (b / 1048576) " MiB"
}

# "16M" -> 16777216 (the specs' K/M/G suffixes)
function parse_size(s,    u) {
	u = substr(s, length(s))
	s = substr(s, 1, length(s) - 1) + 0
	return u == "G" ? s * 1073741824 : u == "M" ? s * 1048576 : s * 1024
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
	print "case,setup,% change in time per step"
	file = 0
	M1 = "measured (one session)"
	M10 = "measured (median of sessions)"
}

# The median of the sessions' % changes for case @c ("" if none).
function session_median(c,    i, j, k, n, r, x) {
	n = 0
	for (i = 1; i <= nsess[c]; i++) {
		k = sid[c, i]
		if (((c, k, "thp") in ns) && ((c, k, "4K") in ns))
			r[++n] = 100.0 * (ns[c, k, "thp"] - ns[c, k, "4K"]) / ns[c, k, "4K"]
	}
	for (i = 2; i <= n; i++)	# insertion sort
		for (j = i; j > 1 && r[j - 1] > r[j]; j--) {
			x = r[j]; r[j] = r[j - 1]; r[j - 1] = x
		}
	if (!n)
		return ""
	return sprintf("%.2f", n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2)
}

FNR == 1 {
	file++
	n = csv($0, h)
	for (i = 1; i <= n; i++)
		col[file, h[i]] = i
	next
}

file == 1 {	# one session: workload,footprint,pages,ns_per_step,...
	csv($0, f)
	c = f[col[1, "workload"]] " " size_name(f[col[1, "footprint"]] + 0)
	t[c, M1, f[col[1, "pages"]] == "thp" ? "thp" : "base"] = f[col[1, "ns_per_step"]] + 0
	next
}

file == 2 {	# sessions: session,date,cpus_busy_pct,workload,footprint,pages,ns_per_step,...
	csv($0, f)
	c = f[col[2, "workload"]] " " size_name(f[col[2, "footprint"]] + 0)
	ns[c, f[col[2, "session"]], f[col[2, "pages"]]] = f[col[2, "ns_per_step"]] + 0
	if (!((c, f[col[2, "session"]]) in sess)) {
		sess[c, f[col[2, "session"]]] = 1
		nsess[c]++
		sid[c, nsess[c]] = f[col[2, "session"]]
	}
	next
}

{	# the sweep's CSV
	csv($0, f)
	v = f[col[3, "virt.mode"]]
	hm = f[col[3, "host.os.mode"]]
	if (v == "none" && hm != "base")
		next	# (the host does not exist on bare metal: one of the two equal points)
	split(f[col[3, "input"]], w, ":")
	spec = f[col[3, "input"]]
	sz = spec
	sub(/.*size=/, "", sz)
	sub(/,.*/, "", sz)
	c = w[1] " " size_name(parse_size(sz))
	s = setup_name(v, hm)
	t[c, s, f[col[3, "os.mode"]]] = f[col[3, "cycles.total"]] + 0
	if (!(c in seen_case)) {
		seen_case[c] = 1
		cases[++nc] = c
	}
	if (!(s in seen_setup)) {
		seen_setup[s] = 1
		setups[++nsetups] = s
	}
}

# Rows in the sweep's order of cases; in each, the measurements first, then the setups.
END {
	for (k = 1; k <= nc; k++) {
		m = session_median(cases[k])
		if (m != "")
			printf "%s,%s,%s\n", cases[k], M10, m
		for (j = 0; j <= nsetups; j++) {
			s = j ? setups[j] : M1
			if (((cases[k], s, "thp") in t) && ((cases[k], s, "base") in t))
				printf "%s,%s,%s\n", cases[k], s, pct(t[cases[k], s, "thp"], t[cases[k], s, "base"])
		}
	}
}
