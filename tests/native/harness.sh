# harness.sh - what tests/native.sh, tests/native_procs.sh and tests/native_mthp.sh
# share, sourced by each (bash): the common skips, the probe for mmusim's Valgrind
# tool, the static program in 4 KiB writes, the check that native and replay have
# the same steps, and a case's verdict. The callers set MMUSIM and T, and keep the
# counters pass, xfail and fails and the maps EXPECTED_FAIL and WHY.

skip() { echo "SKIP: $*"; exit 0; }

# Skips (exit 0) on a machine that cannot run a case natively and capture it.
native_preflight() {
	[ "$(uname -m)" = x86_64 ] || skip "not an x86-64 machine"
	command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed (apt-get install valgrind)"
	[ -r /proc/self/smaps_rollup ] || skip "no /proc/self/smaps_rollup"
	command -v cc >/dev/null 2>&1 || skip "no C compiler"
}

# The capture finds its tool as it always does (sim/capture.c); without it, skip.
native_tool_check() {
	if ! "$MMUSIM" capture -o "$T/true.mtr" -- /bin/true >/dev/null 2>"$T/tool.err"; then
		grep -q "Valgrind tool not found" "$T/tool.err" &&
			skip "mmusim's Valgrind tool was not built (no valgrind tool headers/archives)"
		echo "FAIL: a capture of /bin/true: $(tail -1 "$T/tool.err")"
		exit 1
	fi
}

# native_build SRC LINKED COPY: SRC as a static program at LINKED (written by the
# linker, whose large writes give ext4 large folios, Linux 6.16+) and the same
# bytes at COPY written in 4 KiB write()s (order-0 pages in the page cache, as the
# replay's os.file_cache_folio_size 4K), both written back before they run:
# fault-around (filemap_map_pages()) skips a folio it cannot lock, and once, while
# other builds loaded the disk, a case came out a page short natively, most likely
# a folio of the fresh binary locked for writeback.
native_build() {
	cc -std=gnu11 -O1 -static -no-pie -o "$2" "$1" 2>"$T/cc.err" ||
		skip "cannot build a static program (libc6-dev): $(head -1 "$T/cc.err")"
	dd if="$2" of="$3" bs=4096 status=none && chmod +x "$3" && sync "$2" "$3" || exit 1
}

# native_same_steps NAME: 0 if $T/NAME.native and $T/NAME.replay hold the same
# steps and figures, else a FAIL line (fails counted) and 1.
native_same_steps() {
	[ "$(cut -d' ' -f1,2 "$T/$1.native")" = "$(cut -d' ' -f1,2 "$T/$1.replay")" ] && return 0
	echo "FAIL $1: $(wc -l <"$T/$1.native") native figures, $(wc -l <"$T/$1.replay") replayed (markers differ)"
	fails=$((fails + 1))
	return 1
}

# native_verdict NAME: the case's line from $bad, $xp and $xf (the figures that
# differ, match against EXPECTED_FAIL, differ as expected), counted.
native_verdict() {
	if [ -n "$bad" ]; then
		echo "FAIL $1:$bad differ"
		fails=$((fails + 1))
	elif [ -n "$xp" ]; then
		echo "XPASS $1:$xp match now: remove them from EXPECTED_FAIL"
		fails=$((fails + 1))
	elif [ -n "$xf" ]; then
		echo "XFAIL $1:$xf (${WHY[$1]})"
		xfail=$((xfail + 1))
	else
		echo "ok $1"
		pass=$((pass + 1))
	fi
}
