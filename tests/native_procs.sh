#!/bin/bash
# native_procs.sh - two processes, natively and replayed, equal at every step (as
# tests/native.sh is for one process).
#
# Each case of tests/native/procs.c (fork-write, fork-collapse, thp-turns,
# shared-anon) runs natively NATIVE_RUNS times (default 3): the program forks, the
# two processes take turns over pipes, and each prints at each of its markers (a
# getppid() call) its own minor and major faults (getrusage), Rss and
# AnonHugePages (/proc/self/smaps_rollup) and the thp_* events of /proc/vmstat,
# with the marker's global index (the order of the markers over both processes).
# The program is captured once by mmusim's Valgrind tool, which follows the fork
# into one mtr file, and replayed with `run --steps` under `config host` (this
# machine's THP sysfs settings, its zero pages, its kernel release); with several
# processes the --steps row of a marker holds the marking process's own pgfault,
# Rss and AnonHugePages and the system-wide thp_* counts.
#
# What is compared, all deltas, native against replay, exactly:
#   per process, from each marker to the process's next one (step P:A-B):
#     minflt = pgfault - pgmajfault, majflt, rss_kb = (rss_bytes + file_rss_bytes) / 1024,
#     anon_huge_kb = anon_huge_bytes / 1024;
#   the fork (step 1:A-B, A the parent's last marker before the fork, B the
#     child's first): minflt and majflt are the child's own since the fork (its
#     rusage starts there), rss_kb and anon_huge_kb the child's at B less the
#     parent's at A -- what dup_mmap() copied (copy_page_range() leaves the
#     PTEs of a file mapping without anon_vma to refault) and what the child
#     faulted before B; without a parent marker before the fork, none;
#   system-wide, from each global marker to the next (step g:B): the thp_* and
#     pglazy* events of /proc/vmstat. Deltas, not absolute values: a process's
#     absolute Rss counts the program's start-up, which runs under Valgrind in the
#     capture (its stack and its own mappings are not the program's).
# Natively procs.c unmaps [vdso] and [vvar] first (Valgrind gives the program
# none: the parent's vdso page would count in the fork step natively only), and
# a forked child measures once before its first marker (its first measurement
# would refault text and .rodata between its getrusage() and its smaps_rollup
# read, Rss counting pages its minflt does not).
# /proc/vmstat is system-wide (other processes fault THPs too): the native
# delta taken is the smallest of the runs, for every figure (the per-process
# ones are the same in every run); a case whose only differences are thp_* or
# pglazy* figures or an Rss above the replay's gets up to two more rounds of runs,
# each from a fresh copy of the binary (once in a while the binary's page cache
# came back in large folios mid-run, and the child's fault-around mapped 4-8 KiB
# more of its text at the fork).
#
# The machine's THP state is read, never assumed: procs.c prints
# transparent_hugepage's enabled, defrag, use_zero_page, shmem_enabled and
# khugepaged/max_ptes_shared (the log shows them), config host reads them for
# the replay. The cases ask for THPs with MADV_HUGEPAGE: skipped when THP is
# "never" (or absent).
#
# Natively, glibc (2.35+) registers an rseq area in each thread's TCB, which the
# kernel writes on the way back to user space after the thread was scheduled
# (rseq_update_cpu_node_id()); after a fork that write is a copy-on-write fault of
# the TCB's page, at a moment the scheduler picks, that no trace shows (Valgrind
# refuses rseq). The cases run with GLIBC_TUNABLES=glibc.pthread.rseq=0, natively
# and captured: without it a process's first step after the fork counts one
# fault more natively, some runs.
#
# Known differences per case: "STEP:FIGURE ..." with the reason (EXPECTED_FAIL),
# reported as XFAIL with both numbers; one that matches after all is XPASS and
# fails, so that the expectation gets removed. Any other difference is a FAIL.
#
# Skips (exit 0, "SKIP: ...") without valgrind, mmusim's Valgrind tool, x86-64,
# smaps_rollup, THP or a static C library.
set -u
export GLIBC_TUNABLES=glibc.pthread.rseq=0 # see above
MMUSIM=${MMUSIM:-./mmusim}
case $MMUSIM in /*) ;; */*) MMUSIM=$PWD/$MMUSIM ;; esac # the cases run in their directory
RUNS=${NATIVE_RUNS:-3}

. "$(dirname "$0")/native/harness.sh"
native_preflight
THP=/sys/kernel/mm/transparent_hugepage
[ -r $THP/enabled ] || skip "no transparent huge pages ($THP/enabled)"
grep -q '\[never\]' $THP/enabled && skip "transparent huge pages are 'never' here ($THP/enabled)"

T=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-native-procs.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
native_tool_check
# run from the copy in 4 KiB writes: with the linker's large folios fault-around
# maps whole folios, and the child's text refaults after the fork would differ for
# that reason alone
native_build tests/native/procs.c "$T/procs.ld" "$T/procs"
setarch=""
setarch -R true 2>/dev/null && setarch="setarch -R"
"$MMUSIM" config host >"$T/host.yaml" || exit 1
echo "machine: $(uname -r), $(grep -o ' zero_page: [a-z]*' "$T/host.yaml" | head -1 | sed 's/^ //'), $(grep -o 'use_zero_page: [a-z]*, huge_zero_allocated: [a-z]*' "$T/host.yaml")"

CASES="fork-write fork-collapse thp-turns shared-anon"

# Known differences: "STEP:FIGURE ..." per case, and why (none open today).
declare -A EXPECTED_FAIL WHY

PROCF="minflt majflt rss_kb anon_huge_kb"
SYSF="thp_fault_alloc thp_fault_fallback thp_split_pmd thp_collapse_alloc thp_zero_page_alloc thp_split_page pglazyfree pglazyfreed thp_deferred_split_page"

# Marker rows "PROC GLOBAL minflt majflt rss_kb anon_huge_kb SYS..." (either side) and
# the fork's marker count -> "STEP FIELD DELTA" lines
deltas() {
	sort -k2,2n "$1" | awk -v fa="$2" -v nsys="$(echo $SYSF | wc -w)" '
	{ p = $1; g = $2
	  if (p in last) { for (j = 0; j < 4; j++) print p ":" last[p] "-" g, j, $(3 + j) - v[p, j] }
	  else if (p == 1 && fa > 0) {
	      a = fa - 1 # the last marker before the fork, by the parent
	      print "1:" a "-" g, 0, $3; print "1:" a "-" g, 1, $4
	      print "1:" a "-" g, 2, $5 - v0[a, 2]; print "1:" a "-" g, 3, $6 - v0[a, 3] }
	  if (g > 0) for (j = 0; j < nsys; j++) print "g:" g, 4 + j, $(7 + j) - s[j]
	  for (j = 0; j < 4; j++) v[p, j] = $(3 + j)
	  for (j = 0; j < nsys; j++) s[j] = $(7 + j)
	  if (p == 0) for (j = 0; j < 4; j++) v0[g, j] = $(3 + j)
	  last[p] = g }' |
		awk -v names="$PROCF $SYSF" 'BEGIN { split(names, n, " ") } { print $1, n[$2 + 1], $3 }'
}

# native output -> marker rows; the child's fork count into $T/$name.fa
native_rows() {
	awk '$1 == "proc" && $3 == "forked-after" { print $4 >"'"$T/$name.fa"'"; next }
	$1 == "proc" && $3 == "marker" { printf "%s %s", $2, $4
	  for (i = 5; i < NF; i += 2) printf " %s", $(i + 1); printf "\n" }' "$1"
}

# the --steps CSV -> marker rows
replay_rows() {
	awk -F, -v sys="$SYSF" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ printf "%s %s %d %d %d %d", $c["process"], $c["marker"], $c["pgfault"] - $c["pgmajfault"],
	    $c["pgmajfault"], ($c["rss_bytes"] + $c["file_rss_bytes"]) / 1024, $c["anon_huge_bytes"] / 1024
	  n = split(sys, t, " "); for (j = 1; j <= n; j++) printf " %d", $c[t[j]]; printf "\n" }' "$1"
}

# $1 more native runs of case $name, their deltas added to $T/$name.all;
# $T/$name.native: the smallest delta of all runs so far, per step and figure
native_runs() {
	local r n0
	n0=$(ls "$T/$name".n* 2>/dev/null | wc -l)
	for r in $(seq $((n0 + 1)) $((n0 + $1))); do
		(cd "$T" && $setarch ./procs "$name" >"$T/$name.n$r" 2>"$T/$name.err") || return 1
		[ -n "$(head -1 "$T/$name.n$r" | grep '^# thp ')" ] && [ $r = 1 ] && head -1 "$T/$name.n$r" >"$T/$name.state"
		native_rows "$T/$name.n$r" >"$T/$name.rows$r"
		deltas "$T/$name.rows$r" "$(cat "$T/$name.fa" 2>/dev/null || echo 0)" >>"$T/$name.all"
	done
	awk '{ k = $1 " " $2; if (!(k in m) || $3 < m[k]) m[k] = $3 } END { for (k in m) print k, m[k] }' \
		"$T/$name.all" | sort -k1,1 -k2,2 >"$T/$name.native"
}

run_case() {
	name=$1
	: >"$T/$name.all"
	if ! native_runs "$RUNS"; then
		echo "FAIL $name: the native run failed: $(head -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	if ! (cd "$T" && "$MMUSIM" capture -o "$T/$name.mtr" -- ./procs "$name" >"$T/$name.cap" 2>"$T/$name.err"); then
		echo "FAIL $name: capture failed: $(tail -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	"$MMUSIM" config host >"$T/host.yaml" || exit 1
	# the program's binary was just written: wholly in the page cache
	if ! "$MMUSIM" run "$T/$name.mtr" -c "$T/host.yaml" --set os.file_cache=warm -q \
		--steps "$T/$name.csv" 2>"$T/$name.err"; then
		echo "FAIL $name: replay failed: $(head -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	replay_rows "$T/$name.csv" >"$T/$name.rrows"
	deltas "$T/$name.rrows" "$(cat "$T/$name.fa")" | sort -k1,1 -k2,2 >"$T/$name.replay"
	native_same_steps "$name" || return
	for round in 1 2; do
		noise=$(paste -d' ' "$T/$name.native" "$T/$name.replay" |
			awk '$3 != $6 { if ($2 !~ /^(thp_|pglazy|rss_kb)/ || $3 < $6) { real = 1 } else n++ }
			     END { print (real || !n) ? "no" : "yes" }')
		[ "$noise" = yes ] || break
		# (an Rss above the replay's: the binary's page cache may have been read
		# back in large folios, which fault-around maps whole; a fresh copy is
		# order-0 pages again)
		dd if="$T/procs.ld" of="$T/procs.new" bs=4096 status=none && chmod +x "$T/procs.new" &&
			mv "$T/procs.new" "$T/procs" && sync "$T/procs" || break
		native_runs "$RUNS" || break
	done
	echo "case $name ($(sed 's/^# thp //' "$T/$name.state"); steps: native / replay)"
	bad="" xf="" xp=""
	while read -r s f nv _ _ rv; do
		mark=""
		exp=" ${EXPECTED_FAIL[$name]:-} "
		if [ "$nv" != "$rv" ]; then
			if [[ "$exp" == *" $s:$f "* ]]; then mark="  XFAIL"; xf="$xf $s:$f"
			else mark="  FAIL"; bad="$bad $s:$f"; fi
		elif [[ "$exp" == *" $s:$f "* ]]; then
			mark="  XPASS"; xp="$xp $s:$f"
		fi
		[ "$nv" = 0 ] && [ "$rv" = 0 ] && continue
		printf '  step %-8s %-24s %10s / %s%s\n' "$s" "$f" "$nv" "$rv" "$mark"
	done < <(paste -d' ' "$T/$name.native" "$T/$name.replay" | sort -t' ' -k1,1V -k2,2)
	native_verdict "$name"
}

pass=0 xfail=0 fails=0
for c in ${NATIVE_PROCS_CASES:-$CASES}; do
	run_case "$c"
done
echo "  native_procs: $pass cases equal to the replay, $xfail expected failures, $fails failed"
[ "$fails" -eq 0 ]
