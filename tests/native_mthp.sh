#!/bin/bash
# native_mthp.sh - anonymous multi-size THP, natively and replayed, equal per
# step and per size (as tests/native.sh is for the PMD-size THP).
#
# As root, each scenario writes the hugepages-<size>kB/enabled files it needs
# (the sizes 16K, 64K, 512K and 2M in turn, every other size never), runs a case
# of tests/native/mthp.c natively NATIVE_RUNS times (default 3), takes `mmusim
# config host` (which reads every per-size knob as set), puts the saved values
# back, captures the case once with mmusim's Valgrind tool and replays it with
# `run --steps` under that config. The program prints at each marker (a
# getppid() call) its minor and major faults, Rss and AnonHugePages, the thp_*
# events of /proc/vmstat and every hugepages-<size>kB/stats/<counter>; the
# replay's --steps CSV has the per-size counters as mthp_<S>_<counter> columns
# (S as os.thp.sizes names it; a size without a column is 0 there). Per step,
# native delta = replay delta, exactly, for
#   minflt, majflt, rss_kb, anon_huge_kb (the process), thp_fault_alloc,
#   thp_fault_fallback, thp_split_pmd, thp_split_page, thp_deferred_split_page
#   (/proc/vmstat), and <size>kB/<counter> for every size with an enabled file
#   and every counter of the model (anon_fault_alloc, anon_fault_fallback,
#   anon_fault_fallback_charge, swpout, swpout_fallback, split, split_failed,
#   split_deferred, nr_anon, nr_anon_partially_mapped) that this kernel has:
#   a kernel without some sizes or counters is compared on what it has, and
#   os.kernel (from config host) decides the model's set.
# Not compared: anon_fault_declined and the top-level anon_beside_full (not in
# mainline Linux: this machine's kernel has them, the model follows mainline
# 6.18, whose sysfs has neither); shmem_*, swpin*, zswpout (shmem mTHP, swap-in
# and zswap are not what these cases do, and the model has no such counters);
# the 8kB directory (no enabled file: file and shmem folios only).
#
# Scenarios (NAME CASE SIZES): aligned VMAs of each size alone (16K, 64K, 512K;
# 2M through inherit, AnonHugePages and the 2048kB counters moving); unaligned
# VMAs (head and tail chunks fall back); a partially populated range (PTEs
# present before the fault: pte_range_none() fails, the next lower enabled
# order, with one size and with 512K, 64K and 16K at once); one size madvise
# and another always (regions with, without and against MADV_HUGEPAGE); munmap
# and MADV_DONTNEED of part of an mTHP (deferred split, nr_anon_partially_mapped,
# Rss); 2M and 64K at once; zero-filled pages of a split folio mapped to the zero
# page (6.12+).
#
# Fragmented memory: physical fragmentation natively is not safe to make on a
# shared machine (it takes filling most of its memory) nor deterministic, so the
# "fragmented" scenario is the fallback order by order of alloc_anon_folio()
# (512K -> 64K -> 16K -> 4K) that PTEs present in the range cause (scenario
# fallback); that the allocation itself fails, order by order, is the model's
# tests/check_mthp.c's business. A memory cgroup whose memory.max makes the
# charge fail (anon_fault_fallback_charge) would be safe and deterministic, but
# the model has no memory cgroup (the charge never fails there), so it could not
# follow: not a scenario.
#
# `always` on a size makes every process of the machine take that size and
# moves the system-wide counters: the scenarios ask madvise where they can,
# the one `always` phase (scenario sizes, last, so that what other processes
# allocated meanwhile is not freed during another scenario) lasts the native
# runs and config host only, and the counters of the size set to always are
# shown but not compared (under load every process of the machine moves them by
# tens in each step: they measure the machine, not the case); the process's
# faults and Rss show which size each region got (16K: 64 faults per MiB). The
# system-wide figures (thp_*, pglazy*, the per-size counters, gauges among
# them: noise may lower them as well as raise them, so no minimum) are taken per
# step as the value most runs gave (ties: the smallest in magnitude; the
# per-process figures are equal in every run), and a scenario whose only
# differences are system-wide gets up to two more rounds of runs. A FAIL line
# shows every run's value.
#
# Every hugepages-*kB/enabled value is saved before the first write and written
# back on any exit (EXIT, INT, TERM, HUP; also after a failure); a lock
# (flock on /run/lock/mmusim-native-mthp.lock, else under /tmp) keeps two runs
# apart. Skips (exit 0, "SKIP: ...") when not root, without a writable
# hugepages-*kB/enabled, valgrind, mmusim's Valgrind tool, x86-64, smaps_rollup
# or a static C library.
set -u
MMUSIM=${MMUSIM:-./mmusim}
case $MMUSIM in /*) ;; */*) MMUSIM=$PWD/$MMUSIM ;; esac # the cases run in their directory
RUNS=${NATIVE_RUNS:-3}
THP=/sys/kernel/mm/transparent_hugepage

. "$(dirname "$0")/native/harness.sh"
native_preflight
[ "$(id -u)" = 0 ] || skip "not root: the scenarios write $THP/hugepages-*kB/enabled"
writable=""
for f in $THP/hugepages-*kB/enabled; do
	[ -w "$f" ] && writable=1
done
[ -n "$writable" ] || skip "no writable $THP/hugepages-*kB/enabled (a kernel before 6.8, or no mTHP)"
command -v flock >/dev/null 2>&1 || skip "no flock (util-linux)"

T=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-native-mthp.XXXXXX") || exit 1
LOCK=/run/lock/mmusim-native-mthp.lock
[ -d /run/lock ] && [ -w /run/lock ] || LOCK=/tmp/mmusim-native-mthp.lock
exec 9>>"$LOCK" || { rm -rf "$T"; echo "FAIL: cannot open $LOCK"; exit 1; }
if ! flock -w 300 9; then
	rm -rf "$T"
	echo "FAIL: another native_mthp.sh holds $LOCK for 5 minutes"
	exit 1
fi

# every enabled file, and its value now (the word in brackets)
declare -A SAVED
for f in $THP/hugepages-*kB/enabled; do
	[ -r "$f" ] || continue
	v=$(sed -n 's/.*\[\([a-z]*\)\].*/\1/p' "$f")
	[ -n "$v" ] || { rm -rf "$T"; echo "FAIL: unexpected text in $f: $(cat "$f")"; exit 1; }
	SAVED[$f]=$v
done
# Write every saved value back; 1 if one does not read back.
restore() {
	local f bad=0
	for f in "${!SAVED[@]}"; do
		echo "${SAVED[$f]}" >"$f" 2>/dev/null
		grep -q "\[${SAVED[$f]}\]" "$f" || { echo "FAIL: cannot restore $f to ${SAVED[$f]}" >&2; bad=1; }
	done
	return $bad
}
trap 'restore; [ -n "${NATIVE_MTHP_KEEP:-}" ] || rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

native_tool_check
native_build tests/native/mthp.c "$T/mthp.ld" "$T/mthp"
setarch=""
setarch -R true 2>/dev/null && setarch="setarch -R"
echo "machine: $(uname -r), enabled $(sed -n 's/.*\[\([a-z]*\)\].*/\1/p' $THP/enabled), saved:$(for f in "${!SAVED[@]}"; do d=${f%/enabled}; printf ' %s=%s' "${d##*hugepages-}" "${SAVED[$f]}"; done | tr ' ' '\n' | sort -n | tr '\n' ' ')"

# NAME CASE SIZES (SIZE=VALUE,...; every other size never)
SCENARIOS="aligned-16K aligned 16=madvise
aligned-64K aligned 64=madvise
aligned-512K aligned 512=madvise
aligned-2M aligned 2048=inherit
unaligned-64K unaligned 64=madvise
unaligned-512K unaligned 512=madvise,16=madvise
populated-64K populated 64=madvise
fallback populated 512=madvise,64=madvise,16=madvise
munmap-64K munmap 64=madvise
munmap-16K munmap 16=madvise
dontneed dontneed 512=madvise,16=madvise
pmd pmd 2048=inherit,64=madvise
free-64K free 64=madvise
pageout-64K pageout 64=madvise
collapse collapse 2048=inherit,64=madvise
mremap-64K mremap 64=madvise
read-16K read 16=madvise
ptemapped-2M ptemapped 2048=inherit,16=madvise
zero-remap zeroremap 2048=inherit,64=madvise
sizes sizes 64=madvise,16=always"

# Known differences: "STEP:FIGURE ..." per scenario, and why (none at present).
declare -A EXPECTED_FAIL WHY

# the counters of the model (sim/stats.c mthp_stat_name)
MODEL="anon_fault_alloc anon_fault_fallback anon_fault_fallback_charge swpout swpout_fallback split split_failed split_deferred nr_anon nr_anon_partially_mapped"
PROCF="minflt majflt rss_kb anon_huge_kb"
VMF="thp_fault_alloc thp_fault_fallback thp_split_pmd thp_split_page thp_deferred_split_page pglazyfree pglazyfreed"

# Write SIZES: each listed size its value, every other size with an enabled file never.
apply() {
	local f d kb want
	for f in "${!SAVED[@]}"; do
		d=${f%/enabled}
		kb=${d##*hugepages-}
		kb=${kb%kB}
		want=$(echo ",$1," | sed -n "s/.*,$kb=\([a-z]*\),.*/\1/p")
		echo "${want:-never}" >"$f" || return 1
	done
}

# The figures compared here: "NAME" lines, the native names
figures() {
	local f d kb c
	for f in $PROCF $VMF; do echo "$f"; done
	for f in "${!SAVED[@]}"; do
		d=${f%/enabled}
		kb=${d##*hugepages-}
		for c in $MODEL; do
			[ -e "$d/stats/$c" ] && echo "$kb/$c"
		done
	done
}

# native output -> "STEP FIELD DELTA" lines for the figures in $T/figures
native_deltas() {
	awk 'NR == FNR { want[$1] = 1; next }
	$1 == "marker" { k = $2; for (i = 3; i < NF; i += 2) if ($i in want) { v[k, $i] = $(i + 1); name[$i] = 1 }; n = k + 1 }
	END { for (s = 1; s < n; s++) for (f in name) print s, f, v[s, f] - v[s - 1, f] }' "$T/figures" "$1"
}

# the --steps CSV -> "STEP FIELD DELTA" lines under the native names. A size
# without columns is 0, but for 2M: a config without a size below PMD order has
# no mthp_* columns (the report's "mthp" object is left out then too: the 2M row
# repeats thp_fault_alloc and its kin), so 2048kB's events are compared with the
# /proc/vmstat columns the kernel counts with them (anon_fault_alloc and
# thp_fault_alloc, anon_fault_fallback and thp_fault_fallback, split and
# thp_split_page, split_deferred and thp_deferred_split_page: the same
# count_vm_event() and count_mthp_stat() call sites of mm/huge_memory.c and
# mm/memory.c); its other counters (the gauges nr_anon*, swpout*, ...) have no
# column there and are not compared ("NA"). The scenarios that need them enable
# a size below 2M beside it.
replay_deltas() {
	awk -F, 'NR == FNR { want[++nf] = $1; next }
	FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ k = $c["marker"]
	  v[k, "minflt"] = $c["pgfault"] - $c["pgmajfault"]; v[k, "majflt"] = $c["pgmajfault"]
	  v[k, "rss_kb"] = ($c["rss_bytes"] + $c["file_rss_bytes"]) / 1024
	  v[k, "anon_huge_kb"] = $c["anon_huge_bytes"] / 1024
	  for (j = 1; j <= nf; j++) {
	      f = want[j]
	      if (f ~ /^(thp_|pglazy)/) v[k, f] = $c[f]
	      else if (f ~ /kB\//) {
	          split(f, a, "/"); kb = a[1]; sub(/kB$/, "", kb)
	          kb += 0; s = kb >= 1024 ? (kb / 1024) "M" : kb "K"
	          col = "mthp_" s "_" a[2]
	          if (col in c) v[k, f] = $c[col]
	          else if (s != "2M") v[k, f] = 0
	          else if (a[2] in pmd) v[k, f] = $c[pmd[a[2]]]
	          else v[k, f] = "NA"
	      }
	  }
	  n = k + 1 }
	BEGIN { pmd["anon_fault_alloc"] = "thp_fault_alloc"; pmd["anon_fault_fallback"] = "thp_fault_fallback"
	        pmd["split"] = "thp_split_page"; pmd["split_deferred"] = "thp_deferred_split_page" }
	END { for (s = 1; s < n; s++) for (j = 1; j <= nf; j++) { f = want[j]
	        print s, f, v[s, f] == "NA" ? "NA" : v[s, f] - v[s - 1, f] } }' \
		"$T/figures" "$1"
}

# $1 more native runs of scenario $name (under its sizes, put back after), their
# deltas in $T/$name.run<N>; $T/$name.native: per step and figure, the value
# most runs gave
native_runs() {
	local r n0 rc=0
	n0=$(ls "$T/$name".delta* 2>/dev/null | wc -l)
	apply "$sizes" || { restore; return 1; }
	for r in $(seq $((n0 + 1)) $((n0 + $1))); do
		(cd "$T" && $setarch ./mthp "$prog" >"$T/$name.n$r" 2>"$T/$name.err") || { rc=1; break; }
		native_deltas "$T/$name.n$r" | sort -k1,1n -k2,2 >"$T/$name.delta$r"
	done
	# config host reads the sizes as set, before they are put back
	[ -n "${2:-}" ] && { "$MMUSIM" config host >"$T/$name.host.yaml" || rc=1; }
	restore || return 1
	[ $rc = 0 ] || return 1
	# per step and figure, the value most runs gave (ties: the smallest in
	# magnitude), and every run's value for the log
	cat "$T/$name".delta* | awk '{ k = $1 " " $2; c[k, $3]++; if (!(k SUBSEP $3 in seen)) { seen[k, $3] = 1; vals[k] = vals[k] " " $3 } }
		END { for (k in vals) { n = split(vals[k], v, " "); best = v[1]
			for (i = 2; i <= n; i++) { a = v[i] < 0 ? -v[i] : v[i]; b = best < 0 ? -best : best
				if (c[k, v[i]] > c[k, best] || (c[k, v[i]] == c[k, best] && a < b)) best = v[i] }
			print k, best } }' | sort -k1,1n -k2,2 >"$T/$name.native"
	paste -d' ' "$T/$name".delta* | awk '{ printf "%s %s", $1, $2; for (i = 3; i <= NF; i += 3) printf " %s", $i; printf "\n" }' >"$T/$name.values"
}

# run_scenario NAME CASE SIZES
run_scenario() {
	name=$1 prog=$2 sizes=$3
	local kb
	for kb in $(echo "$sizes" | tr ',' '\n' | cut -d= -f1); do
		if [ ! -w "$THP/hugepages-${kb}kB/enabled" ]; then
			echo "skip $name: this kernel has no writable hugepages-${kb}kB/enabled"
			return
		fi
	done
	rm -f "$T/$name".delta*
	if ! native_runs "$RUNS" host; then
		echo "FAIL $name: the native run failed: $(head -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	if ! (cd "$T" && "$MMUSIM" capture -o "$T/$name.mtr" -- ./mthp "$prog" >/dev/null 2>"$T/$name.err"); then
		echo "FAIL $name: capture failed: $(tail -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	# the program's binary was just written: wholly in the page cache
	if ! "$MMUSIM" run "$T/$name.mtr" -c "$T/$name.host.yaml" --set os.file_cache=warm -q \
		--steps "$T/$name.csv" 2>"$T/$name.err"; then
		echo "FAIL $name: replay failed: $(head -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	replay_deltas "$T/$name.csv" | sort -k1,1n -k2,2 >"$T/$name.replay"
	native_same_steps "$name" || return
	# other processes move the system-wide figures: where every difference is one
	# of them, up to two more rounds of runs
	for round in 1 2; do
		noise=$(paste -d' ' "$T/$name.native" "$T/$name.replay" |
			awk -v z=",$sizes," '{ k = $2; sub(/kB\/.*/, "", k) } index(z, "," k "=always,") { next }
			     $3 != $6 && $6 != "NA" { if ($2 ~ /^(minflt|majflt|rss_kb|anon_huge_kb)$/) { real = 1 } else n++ }
			     END { print (real || !n) ? "no" : "yes" }')
		[ "$noise" = yes ] || break
		native_runs "$RUNS" || break
	done
	echo "case $name ($(echo "$sizes" | tr ',' ' '); steps: native / replay)"
	bad="" xf="" xp=""
	while read -r s f nv _ _ rv; do
		mark=""
		if [[ ",$sizes," == *",${f%%kB/*}=always,"* ]]; then
			[ "$nv" = 0 ] && [ "$rv" = 0 ] && continue
			printf '  step %s %-32s %8s / %s  (not compared: always)\n' "$s" "$f" "$nv" "$rv"
			continue
		fi
		exp=" ${EXPECTED_FAIL[$name]:-} "
		if [ "$nv" != "$rv" ] && [ "$rv" != NA ]; then
			if [[ "$exp" == *" $s:$f "* ]]; then mark="  XFAIL"; xf="$xf $s:$f"
			else mark="  FAIL (runs:$(awk -v s="$s" -v f="$f" '$1 == s && $2 == f { $1 = $2 = ""; print }' "$T/$name.values"))"; bad="$bad $s:$f"; fi
		elif [[ "$exp" == *" $s:$f "* ]]; then
			mark="  XPASS"; xp="$xp $s:$f"
		fi
		[ "$rv" = NA ] && continue
		[ "$nv" = 0 ] && [ "$rv" = 0 ] && continue
		printf '  step %s %-32s %8s / %s%s\n' "$s" "$f" "$nv" "$rv" "$mark"
	done < <(paste -d' ' "$T/$name.native" "$T/$name.replay")
	native_verdict "$name"
}

figures | sort -u >"$T/figures"
pass=0 xfail=0 fails=0
while read -r n p z; do
	case " ${NATIVE_MTHP_CASES:-$n} " in *" $n "*) run_scenario "$n" "$p" "$z" ;; esac
done <<<"$SCENARIOS"
restore || fails=$((fails + 1))
echo "  native_mthp: $pass scenarios equal to the replay, $xfail expected failures, $fails failed"
[ "$fails" -eq 0 ]
