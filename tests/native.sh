#!/bin/bash
# native.sh - the replay against the real kernel of this machine (issue 13 item 5).
#
# Each case of tests/native/steps.c runs natively NATIVE_RUNS times (default 3),
# printing at each marker (a getppid() call) the process's minor and major faults
# (getrusage), Rss and AnonHugePages (/proc/self/smaps_rollup) and the thp_*
# events of /proc/vmstat. It is captured once by mmusim's Valgrind tool (each
# getppid() a MARKER record) and replayed with `run --steps` under `config host`
# (this machine's THP sysfs settings, its zero pages, its kernel release). Per
# step (between two markers) and per figure, the native delta must equal the
# replay's exactly:
#
#   minflt        = pgfault - pgmajfault       majflt = pgmajfault
#   rss_kb        = (rss_bytes + file_rss_bytes) / 1024
#   anon_huge_kb  = anon_huge_bytes / 1024     thp_* = thp_*
#   pglazyfree    = pglazyfree                 pglazyfreed = pglazyfreed
#
# /proc/vmstat is system-wide (other processes fault THPs too): the native
# delta taken is the smallest of the runs, for every figure (the per-process
# ones are the same in every run); a case whose only differences are thp_* or
# pglazy* figures above the replay's, or minor faults above them in a cold-cache
# read (I/O still in flight natively), gets up to two more rounds of runs.
#
# A case may list figures of steps that are known to differ, with the reason
# (EXPECTED_FAIL): they are reported as XFAIL with both numbers; if one of them
# matches after all, the case is XPASS and fails, so that the expectation gets
# removed. Any other difference is a FAIL.
#
# The replay reads ahead as the disk holding the case files does (its queue's
# read_ahead_kb as os.read_ahead_kb; config host cannot know a trace's disk).
# NATIVE_CASES="NAME ..." runs only those cases (the use_zero_page flip only with
# thp-read among them).
#
# Skips (exit 0, "SKIP: ...") without valgrind, mmusim's Valgrind tool, x86-64,
# smaps_rollup or a static C library.
#
# NATIVE_GUEST=STATE: the native side runs in a QEMU guest with a stock Debian
# kernel instead of on this machine (tests/native/guest.sh: the zero pages in
# STATE -- fresh, huge-zero-allocated or use-zero-page-0 -- the cases on an ext4
# disk, each case's `config host` taken in the guest right after its runs, and
# thp-read with use_zero_page flipped). The capture and the replay stay here,
# the replay configured by the guest's config host (its os.kernel too). The
# extra rounds against other processes' THP events are not taken (the guest
# runs nothing else). A case whose first guest run made the huge zero page is
# also compared as NAME-first-run: that run alone, against a replay configured
# from the guest's config host before it (the huge zero page not allocated yet).
# Skips as guest.sh does (no qemu, no kernel).
set -u
MMUSIM=${MMUSIM:-./mmusim}
case $MMUSIM in /*) ;; */*) MMUSIM=$PWD/$MMUSIM ;; esac # the cases run in their directory
RUNS=${NATIVE_RUNS:-3}
GUEST=${NATIVE_GUEST:-}
case $GUEST in "" | fresh | huge-zero-allocated | use-zero-page-0) ;;
*) echo "NATIVE_GUEST: unknown state '$GUEST' (fresh, huge-zero-allocated, use-zero-page-0)" >&2; exit 2 ;;
esac

. "$(dirname "$0")/native/harness.sh"
native_preflight

T=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-native.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# the capture finds its tool as it always does (sim/capture.c); without it, skip
native_tool_check
# steps as the linker wrote it (ext4 large folios) and steps4k in 4 KiB writes
native_build tests/native/steps.c "$T/steps" "$T/steps4k"
# The zero pages as this kernel has them, for the log: config host probes whether a read
# maps the zero page (os.zero_page) and reads whether the huge zero page exists
# (os.thp.huge_zero_allocated); each case reads them again right before its replay, after
# its native runs, since a native run may have made the huge zero page.
setarch=""
if [ -z "$GUEST" ]; then
	"$MMUSIM" config host >"$T/host.yaml" || exit 1
	release=$(uname -r) machine=""
	setarch -R true 2>/dev/null && setarch="setarch -R"
fi

# name, steps.c case, binary
CASES="anon64m:anon64m:steps anon-unaligned:anon-unaligned:steps file-private:file-private:steps
file-private-hintless:file-private-hintless:steps4k
file-shared:file-shared:steps file-shared-large:file-shared-large:steps text:text:steps4k
text-large:text:steps thp-unaligned:thp-unaligned:steps
thp-read:thp-read:steps thp-partial:thp-partial:steps collapse:collapse:steps mremap:mremap:steps
madv-free-thp:madv-free-thp:steps madv-free-4k:madv-free-4k:steps pageout-noswap:pageout-noswap:steps
file-random-cold:file-random-cold:steps file-seq-cold:file-seq-cold:steps
file-seq-cold-16m:file-seq-cold-16m:steps file-seq-cold-64m:file-seq-cold-64m:steps
populate:populate:steps populate-madvise:populate-madvise:steps mlock:mlock:steps mlockall:mlockall:steps
tmpfs:tmpfs:steps memfd:memfd:steps memfd-fresh:memfd-fresh:steps
thp-two-vmas:thp-two-vmas:steps"
# NATIVE_CASES="NAME ...": only these cases (and no use_zero_page flip unless thp-read is one)
if [ -n "${NATIVE_CASES:-}" ]; then
	sel=""
	for want in $NATIVE_CASES; do
		found=""
		for spec in $CASES; do
			[ "${spec%%:*}" = "$want" ] && sel="$sel $spec" found=1
		done
		[ -n "$found" ] || { echo "NATIVE_CASES: unknown case '$want'" >&2; exit 2; }
	done
	CASES=$sel
fi
if [ -n "$GUEST" ]; then
	MMUSIM=$MMUSIM bash tests/native/guest.sh "$T" "$GUEST" "$RUNS" $CASES >"$T/guest.out" 2>&1
	rc=$?
	grep -q '^SKIP: ' "$T/guest.out" && [ ! -e "$T/guest/done" ] && skip "guest: $(sed 's/^SKIP: //' "$T/guest.out")"
	if [ $rc -ne 0 ] || [ ! -e "$T/guest/done" ]; then
		echo "FAIL: the guest (tests/native/guest.sh, exit $rc):"
		cat "$T/guest.out"
		exit 1
	fi
	cp "$T/guest/host.yaml" "$T/host.yaml" || exit 1
	release=$(cat "$T/guest/uname") machine=" (QEMU guest, $GUEST)"
	[ -e "$T/guest/setarch" ] && setarch="setarch -R"
fi
# The read-ahead of the disk the case files are on (its queue's read_ahead_kb, the
# bdi's ra_pages that do_sync_mmap_readahead() and page_cache_async_ra() use): not in
# config host, which cannot know which disk a trace's files are on. The guest's disk
# is not looked at (the default, 128, is a virtio disk's).
ra=""
if [ -z "$GUEST" ] && mm=$(stat -c '%Hd:%Ld' "$T" 2>/dev/null); then
	b=/sys/dev/block/$mm
	[ -r "$b/queue/read_ahead_kb" ] || b=$b/.. # a partition: its disk's queue
	[ -r "$b/queue/read_ahead_kb" ] && ra="--set os.read_ahead_kb=$(cat "$b/queue/read_ahead_kb")"
fi
echo "machine: $release$machine, $(grep -o ' zero_page: [a-z]*' "$T/host.yaml" | head -1 | sed 's/^ //'), $(grep -o 'use_zero_page: [a-z]*, huge_zero_allocated: [a-z]*' "$T/host.yaml")${ra:+, ${ra#--set os.}}"

# Known differences: "STEP:FIGURE ..." per case, and why (none at present).
declare -A EXPECTED_FAIL WHY
# The folio size of a case's warm page cache (os.file_cache_folio_size; 4K when not
# listed): the size of the write()s that wrote its file, as ext4 gives a write the
# folio of the order that fits it (large folios since Linux 6.16, "ext4: enable large
# folio for regular file"; a kernel before it, os.kernel, keeps order-0 pages and the
# value does not matter). file-shared-large's data file is written in 64 KiB writes;
# text-large's binary by the linker, whose large writes made the 1 MiB around
# steps_far one folio (/proc/kpageflags on 6.18.44: folios of 4 KiB to 1 MiB, the
# 1 MiB padding's pages 256..511 one); 6.18 maps a folio whole on a fault
# (finish_fault(), filemap_map_pages()).
declare -A FOLIO=([file-shared-large]=64K [text-large]=1M)

FIELDS="minflt majflt rss_kb anon_huge_kb thp_fault_alloc thp_fault_fallback thp_split_pmd thp_collapse_alloc thp_zero_page_alloc thp_split_page pglazyfree pglazyfreed thp_deferred_split_page"

# native output -> "STEP FIELD DELTA" lines
native_deltas() {
	awk '$1 == "marker" { k = $2; for (i = 3; i < NF; i += 2) v[k, $i] = $(i + 1); f = NF; n = k + 1
		for (i = 3; i < NF; i += 2) name[(i - 1) / 2] = $i; nf = (NF - 2) / 2 }
	END { for (s = 1; s < n; s++) for (j = 1; j <= nf; j++) print s, name[j], v[s, name[j]] - v[s - 1, name[j]] }' "$1"
}

# the --steps CSV -> "STEP FIELD DELTA" lines under the native names
replay_deltas() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ k = $c["marker"]
	  v[k, "minflt"] = $c["pgfault"] - $c["pgmajfault"]; v[k, "majflt"] = $c["pgmajfault"]
	  v[k, "rss_kb"] = ($c["rss_bytes"] + $c["file_rss_bytes"]) / 1024
	  v[k, "anon_huge_kb"] = $c["anon_huge_bytes"] / 1024
	  split("thp_fault_alloc thp_fault_fallback thp_split_pmd thp_collapse_alloc thp_zero_page_alloc thp_split_page pglazyfree pglazyfreed thp_deferred_split_page", t, " ")
	  for (j in t) v[k, t[j]] = $c[t[j]]
	  n = k + 1 }
	END { nf = split("'"$FIELDS"'", f, " ")
	  for (s = 1; s < n; s++) for (j = 1; j <= nf; j++) print s, f[j], v[s, f[j]] - v[s - 1, f[j]] }' "$1"
}

# $1 more native runs of case $name ($prog under $bin), their deltas added to
# $T/$name.all; $T/$name.native: the smallest delta of all runs so far, per step
# and figure. Fails if a run fails. In the guest: its RUNS runs, once.
native_runs() {
	local r n0
	n0=$(ls "$T/$name".n* 2>/dev/null | wc -l)
	if [ -n "$GUEST" ]; then
		local src=${name%-first-run} first=""
		[ "$src" != "$name" ] && first=1
		[ "$n0" = 0 ] && [ -e "$T/guest/$src.n1" ] && [ ! -e "$T/guest/$src.failed" ] || {
			cp "$T/guest/$src.err" "$T/$name.err" 2>/dev/null
			return 1
		}
		if [ -n "$first" ]; then
			cp "$T/guest/$src.n1" "$T/$name.n1" && native_deltas "$T/$name.n1" >>"$T/$name.all"
		else
			for r in "$T/guest/$name".n*; do
				cp "$r" "$T/" && native_deltas "$r" >>"$T/$name.all"
			done
		fi
	fi
	for r in $(seq $((n0 + 1)) $((n0 + $1))); do
		[ -z "$GUEST" ] || break
		(cd "$T" && $setarch "./$bin" "$prog" "$T" >"$T/$name.n$r" 2>"$T/$name.err") || return 1
		native_deltas "$T/$name.n$r" >>"$T/$name.all"
	done
	awk '{ k = $1 " " $2; if (!(k in m) || $3 < m[k]) m[k] = $3 } END { for (k in m) print k, m[k] }' \
		"$T/$name.all" | sort -k1,1n -k2,2 >"$T/$name.native"
}

# run_case NAME:PROG:BIN - native runs, capture, replay under config host, compare
run_case() {
	IFS=: read -r name prog bin <<<"$1"
	if [ "$name" = file-private-hintless ] && [ -z "$setarch" ]; then
		echo "skip $name: without setarch -R its address, so its fault count, is random"
		return
	fi
	# MADV_PAGEOUT swaps out where swap exists: the replay has no swap device of the machine's size
	if [ "$name" = pageout-noswap ] && [ -z "$GUEST" ] && [ "$(wc -l </proc/swaps)" -gt 1 ]; then
		echo "skip $name: this machine has swap (/proc/swaps), the case is the no-swap path"
		return
	fi
	: >"$T/$name.all"
	if ! native_runs "$RUNS"; then
		echo "FAIL $name: the native run failed: $(head -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	if ! (cd "$T" && "$MMUSIM" capture -o "$T/$name.mtr" -- "./$bin" "$prog" "$T" >/dev/null 2>"$T/$name.err"); then
		echo "FAIL $name: capture failed: $(tail -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	if [ -n "$GUEST" ]; then
		if [ "${name%-first-run}" != "$name" ]; then
			cp "$T/guest/${name%-first-run}.host0.yaml" "$T/host.yaml" || exit 1
		else
			cp "$T/guest/$name.host.yaml" "$T/host.yaml" || exit 1
		fi
	else
		"$MMUSIM" config host >"$T/host.yaml" || exit 1
	fi
	# Every file these cases map was just written (the data files by the program, the
	# binaries by cc and dd): wholly in the page cache, as os.file_cache: warm has it;
	# but a *-cold case drops its data file's pages first (POSIX_FADV_DONTNEED).
	cache=warm
	case $name in *-cold | *-cold-*) cache=cold ;; esac
	if ! "$MMUSIM" run "$T/$name.mtr" -c "$T/host.yaml" --set os.file_cache=$cache $ra \
		--set os.file_cache_folio_size=${FOLIO[$name]:-4K} -q \
		--steps "$T/$name.csv" 2>"$T/$name.err"; then
		echo "FAIL $name: replay failed: $(head -1 "$T/$name.err")"
		fails=$((fails + 1))
		return
	fi
	replay_deltas "$T/$name.csv" | sort -k1,1n -k2,2 >"$T/$name.replay"
	native_same_steps "$name" || return
	# Another process's THP events can outlast the minimum of RUNS runs while other
	# work loads the machine: where every difference is a system-wide thp_* figure
	# above the replay's, up to two more rounds of RUNS runs. So do minor faults
	# above the replay's in a cold-cache read (file-*-cold*): under disk load a
	# folio still being read ahead is locked, fault-around skips it
	# (next_uptodate_folio()) and it takes a minor fault of its own, where the
	# model's reads take no time (one CI run gave 258 against 255 for 16 MiB).
	cold=0
	case $name in file-*-cold*) cold=1 ;; esac
	for round in 1 2; do
		noise=$(paste -d' ' "$T/$name.native" "$T/$name.replay" |
			awk -v cold=$cold '$3 != $6 { if (($2 !~ /^(thp_|pglazy)/ && !(cold && $2 == "minflt")) || $3 < $6) { real = 1 } else n++ }
			     END { print (real || !n) ? "no" : "yes" }')
		[ "$noise" = yes ] || break
		native_runs "$RUNS" || break
	done
	echo "case $name (steps: native / replay)"
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
		printf '  step %s %-20s %10s / %s%s\n' "$s" "$f" "$nv" "$rv" "$mark"
	done < <(paste -d' ' "$T/$name.native" "$T/$name.replay")
	native_verdict "$name"
}

pass=0 xfail=0 fails=0
for spec in $CASES; do
	run_case "$spec"
done
# Both ways of the huge zero page: as root, thp-read once more with
# transparent_hugepage/use_zero_page flipped (config host reads it before the
# replay), the value restored on any exit. Where the kernel gives zero pages this
# is the huge zero page against a THP on the first read; where it refuses them
# (mm_forbids_zeropage()) both are a THP, and the replay must say the same.
# The guest ran it after the suite.
UZP=/sys/kernel/mm/transparent_hugepage/use_zero_page
if [ -n "$GUEST" ]; then
	flipped=""
	for f in "$T"/guest/thp-read-use_zero_page=*.host.yaml; do
		[ -e "$f" ] || continue
		f=${f##*/}
		flipped="$flipped ${f%.host.yaml}:thp-read:steps"
	done
	for spec in $flipped; do
		run_case "$spec"
	done
	# A case whose first run made the huge zero page (the guest's config host before
	# its first run and after its last disagree): that first run alone against a
	# replay configured from before it, where the replay allocates it too.
	for spec in $CASES $flipped; do
		IFS=: read -r name prog bin <<<"$spec"
		[ -e "$T/guest/$name.host0.yaml" ] || continue
		[ "$(grep -o 'huge_zero_allocated: [a-z]*' "$T/guest/$name.host0.yaml")" = \
			"$(grep -o 'huge_zero_allocated: [a-z]*' "$T/guest/$name.host.yaml")" ] ||
			run_case "$name-first-run:$prog:$bin"
	done
elif [[ " $CASES " != *" thp-read:thp-read:steps "* ]]; then
	: # NATIVE_CASES without thp-read
elif [ "$(id -u)" = 0 ] && [ -w "$UZP" ] && uzp0=$(cat "$UZP") && [ "$uzp0" = 0 -o "$uzp0" = 1 ]; then
	trap 'echo "$uzp0" >"$UZP"; rm -rf "$T"' EXIT
	trap 'exit 130' INT TERM
	echo $((1 - uzp0)) >"$UZP" &&
		run_case "thp-read-use_zero_page=$((1 - uzp0)):thp-read:steps"
	echo "$uzp0" >"$UZP" || { echo "FAIL: cannot restore $UZP to $uzp0"; fails=$((fails + 1)); }
else
	echo "skip thp-read with use_zero_page flipped: not root, or $UZP not writable"
fi
echo "  native: $pass cases equal to the replay, $xfail expected failures, $fails failed"
[ "$fails" -eq 0 ]
