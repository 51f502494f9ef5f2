#!/bin/bash
# e2e_capture.sh - `mmusim capture` follows what the program really runs
# (sim/capture.c, capture/mm_main.c): a capture through env, env's PATH search,
# sh -c 'exec PROG', a shell script that execs PROG and a #!/usr/bin/env script
# is PROG's own capture, byte for byte (so the same `trace info` and the same
# `run --json` counts), also compressed, also to standard output, also when
# the first image wrote megabytes before its exec; capture follows fork: a
# shell's forked child (sh -c 'PROG; true') and tests/capture/forks.c's two
# children are processes of the same file (mtr version 6: trace info's
# processes line, trace convert keeps them, a replay refuses them with exit 2),
# a program that does not fork gives the same file at two captures in a row, damaged
# version 6 files fail with exit 2; an exec that cannot be followed fails with
# exit 1 naming the program; `make demo` builds the tool.
#
# PROG is tests/capture/pages.c, static and non-PIE (fixed addresses), as
# tests/native.sh builds its programs; the captures run under setarch -R where
# it works. Byte for byte holds because the program gets the same argv and the
# same environment: capture sets an empty LD_PRELOAD (sim/capture.c, cap_env()),
# as Valgrind leaves it across an exec. A shell may reorder the environment
# (dash exports it in its hash order); Debian's valgrind is itself a /bin/sh
# script, so a direct capture's environment is in that order too.
#
# Skips (exit 0, "SKIP: ...") without valgrind, mmusim's Valgrind tool, x86-64
# or a static C library.
set -u
MMUSIM=${MMUSIM:-./mmusim}
case $MMUSIM in /*) ;; */*) MMUSIM=$PWD/$MMUSIM ;; esac # the captures run in $T
skip() { echo "SKIP: $*"; exit 0; }
[ "$(uname -m)" = x86_64 ] || skip "not an x86-64 machine"
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed (apt-get install valgrind)"
command -v cc >/dev/null 2>&1 || skip "no C compiler"
T=$(mktemp -d "${TMPDIR:-/tmp}/mmusim-capture.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh
if ! "$MMUSIM" capture -o "$T/true.mtr" -- /bin/true >/dev/null 2>"$T/tool.err"; then
	grep -q "Valgrind tool not found" "$T/tool.err" &&
		skip "mmusim's Valgrind tool was not built (no valgrind tool headers/archives)"
	echo "FAIL: a capture of /bin/true: $(tail -1 "$T/tool.err")"
	exit 1
fi
cc -std=gnu11 -O1 -static -no-pie -o "$T/pages" tests/capture/pages.c 2>"$T/cc.err" ||
	skip "cannot build a static program (libc6-dev): $(head -1 "$T/cc.err")"
setarch=""
setarch -R true 2>/dev/null && setarch="setarch -R"

# cap OUT ARGS...: capture ARGS into $T/OUT, in $T; its stderr in $T/OUT.err
cap() {
	local out=$1
	shift
	(cd "$T" && $setarch "$MMUSIM" capture -o "$out" -- "$@" >/dev/null 2>"$T/$out.err")
}
# info TRACE: `trace info` without its first line (the path)
info() { "$MMUSIM" trace info "$1" | tail -n +2; }
# counts TRACE: `run --json`, less what differs between runs and the trace's name
counts() {
	"$MMUSIM" run "$1" --modes base,thp --quiet --json "$1.json" &&
		strip <"$1.json" | grep -v -e '"trace":' -e '"input_id":'
}

# --- the program's own capture ------------------------------------------------------------
cap direct.mtr ./pages 64 || bad "capture -- ./pages 64: $(tail -1 "$T/direct.mtr.err")"
info "$T/direct.mtr" >"$T/direct.info"
counts "$T/direct.mtr" >"$T/direct.counts" || bad "run the direct capture"
# pages.c's own mappings, and its 64 stores (at least)
grep -q "r-xp .* $T/pages\$" "$T/direct.info" && ok || bad "the direct capture maps ./pages"
[ "$(awk '$1 == "records:" { print $6 }' "$T/direct.info")" -ge 64 ] 2>/dev/null && ok ||
	bad "the direct capture's stores: $(grep records "$T/direct.info")"

# same NAME OUT: OUT is the direct capture byte for byte, the same trace info and run counts
same() {
	local what=$1 out=$T/$2
	if ! [ -s "$out" ]; then
		bad "$what: no trace ($(tail -1 "$out.err" 2>/dev/null))"
		return
	fi
	cmp -s "$T/direct.mtr" "$out" && ok || bad "$what: not the direct capture's bytes ($(cmp "$T/direct.mtr" "$out" 2>&1))"
	info "$out" >"$out.info" 2>&1
	diff "$T/direct.info" "$out.info" >/dev/null && ok ||
		bad "$what: trace info differs: $(diff "$T/direct.info" "$out.info" | head -4 | tr '\n' ' ')"
	counts "$out" >"$out.counts" 2>&1
	diff "$T/direct.counts" "$out.counts" >/dev/null && ok ||
		bad "$what: run --json differs: $(diff "$T/direct.counts" "$out.counts" | head -4 | tr '\n' ' ')"
}

cap env.mtr env ./pages 64 || bad "capture -- env ./pages 64: $(tail -1 "$T/env.mtr.err")"
same "env ./pages 64" env.mtr
grep -q "capture: env.mtr: the trace is of ./pages (exec'd)" "$T/env.mtr.err" && ok ||
	bad "the summary names the exec'd program: $(head -1 "$T/env.mtr.err")"

# env's PATH search: execve() fails in /nonexistent, then runs $T/pages (argv[0] that path)
(cd "$T" && PATH=/nonexistent:$T:$PATH $setarch "$MMUSIM" capture -o direct.mtr -- "$T/pages" 64 \
	>/dev/null 2>/dev/null) || bad "capture -- \$T/pages 64"
info "$T/direct.mtr" >"$T/direct.info"
counts "$T/direct.mtr" >"$T/direct.counts"
(cd "$T" && PATH=/nonexistent:$T:$PATH $setarch "$MMUSIM" capture -o path.mtr -- env pages 64 \
	>/dev/null 2>"$T/path.mtr.err") || bad "capture -- env pages 64: $(tail -1 "$T/path.mtr.err")"
same "env pages 64 (a PATH search with a failed execve())" path.mtr

cap direct.mtr ./pages 64
info "$T/direct.mtr" >"$T/direct.info"
counts "$T/direct.mtr" >"$T/direct.counts"
cap shc.mtr sh -c 'exec ./pages 64' || bad "capture -- sh -c 'exec ./pages 64': $(tail -1 "$T/shc.mtr.err")"
same "sh -c 'exec ./pages 64'" shc.mtr

printf '#!/bin/sh\nexec ./pages "$@"\n' >"$T/run.sh"
chmod +x "$T/run.sh"
cap script.mtr ./run.sh 64 || bad "capture -- ./run.sh 64: $(tail -1 "$T/script.mtr.err")"
same "a shell script that execs ./pages" script.mtr

# standard output: written in place, the first image is held back and dropped at the exec
(cd "$T" && $setarch "$MMUSIM" capture -o - -- env ./pages 64 >"$T/stdout.mtr" 2>"$T/stdout.mtr.err") ||
	bad "capture -o - -- env ./pages 64: $(tail -1 "$T/stdout.mtr.err")"
same "env ./pages 64 to standard output" stdout.mtr

# compressed: the output file starts again, and so does the zstd stream
cap env.mtr.zst env ./pages 64 || bad "capture -o env.mtr.zst: $(tail -1 "$T/env.mtr.zst.err")"
zstd -qdc "$T/env.mtr.zst" >"$T/zst.mtr" 2>/dev/null || bad "env.mtr.zst is not a zstd file"
same "env ./pages 64 into .mtr.zst" zst.mtr

# a first image of megabytes (its frames already written) before the exec
cap long.mtr sh -c 'i=0; while [ $i -lt 200 ]; do i=$((i+1)); done; exec ./pages 64' ||
	bad "capture of a long shell then exec: $(tail -1 "$T/long.mtr.err")"
same "a shell loop of 200 rounds, then exec ./pages 64" long.mtr

# #!/usr/bin/env ./pages: env runs ./pages ./env.sh 64, as a direct capture of that
printf '#!/usr/bin/env ./pages\n' >"$T/env.sh"
chmod +x "$T/env.sh"
cap direct.mtr ./pages ./env.sh 64
info "$T/direct.mtr" >"$T/direct.info"
counts "$T/direct.mtr" >"$T/direct.counts"
cap shebang.mtr ./env.sh 64 || bad "capture -- ./env.sh 64: $(tail -1 "$T/shebang.mtr.err")"
same "a #!/usr/bin/env ./pages script" shebang.mtr

# --- capture follows fork: one file, every process (mtr version 6) ---------------------------
cap fork.mtr sh -c './pages 64; true' || bad "capture -- sh -c './pages 64; true': $(tail -1 "$T/fork.mtr.err")"
info "$T/fork.mtr" >"$T/fork.info" 2>&1 || bad "trace info of the shell's trace: $(tail -1 "$T/fork.info")"
grep -q "forks 1;" "$T/fork.info" && ok || bad "the shell's trace notes one fork: $(grep threads "$T/fork.info")"
grep -q "^processes:    2; fork 1 switch [0-9]* exit 2 exec 1 prctl 0\$" "$T/fork.info" && ok ||
	bad "two processes, the child exec'd: $(grep processes "$T/fork.info")"
sh_path=$(readlink -f "$(command -v sh)")
grep -q " $sh_path\$" "$T/fork.info" && ok || bad "the first process is the shell ($sh_path)"
sed -n '/^mappings at the first instruction after exec 1:/,$p' "$T/fork.info" | grep -q "/pages\$" && ok ||
	bad "the forked child's exec'd ./pages has its own mappings"
# the child's references are in the same file: the shell's alone are fewer
direct_refs=$(sed -n 's/^records: *\([0-9]*\) ifetch.*/\1/p' "$T/direct.info")
fork_refs=$(sed -n 's/^records: *\([0-9]*\) ifetch.*/\1/p' "$T/fork.info")
[ "$fork_refs" -gt "$direct_refs" ] && ok || bad "the shell's trace holds ./pages's fetches ($fork_refs <= $direct_refs)"
grep -q "exec'd" "$T/fork.mtr.err" && bad "a forked child's exec is reported as the trace's program" || ok
check "$(cd "$T" && ls fork.*.mtr 2>/dev/null | wc -l)" 0 "no file per child"
# the replay runs both processes on one machine (fork.c copies the address space)
"$MMUSIM" run "$T/fork.mtr" --quiet --json "$T/fork.json" 2>"$T/fork.run.err"
check "$?" 0 "run of a two-process trace: exit 0"
check "$(tr -d ' \n' <"$T/fork.json" | grep -o '"sched":{"processes":[0-9]*' | grep -o '[0-9]*$')" 2 \
	"the report counts two processes"
# trace convert keeps the processes
"$MMUSIM" trace convert "$T/fork.mtr" "$T/fork.conv.mtr.zst" 2>"$T/conv.err" && ok || bad "convert: $(cat "$T/conv.err")"
info "$T/fork.conv.mtr.zst" | grep -v -e '^threads:' >"$T/fork.conv.info"
grep -v -e '^threads:' "$T/fork.info" | diff - "$T/fork.conv.info" >/dev/null && ok ||
	bad "trace convert changes the processes: $(grep -v -e '^threads:' "$T/fork.info" | diff - "$T/fork.conv.info" | head -3)"
# a program that forks twice (tests/capture/forks.c): three processes, prctl, the markers of each
cc -std=gnu11 -O1 -static -no-pie -o "$T/forks" tests/capture/forks.c 2>"$T/cc.err" || bad "cc forks.c: $(head -1 "$T/cc.err")"
cap forks.mtr ./forks ./pages 16 || bad "capture -- ./forks: $(tail -1 "$T/forks.mtr.err")"
info "$T/forks.mtr" >"$T/forks.info" 2>&1
grep -q "^processes:    3; fork 2 switch [0-9]* exit 3 exec 1 prctl 1\$" "$T/forks.info" && ok ||
	bad "./forks: $(grep processes "$T/forks.info")"
check "$(grep '^markers:' "$T/forks.info")" "markers:      3" "./forks: a marker per getppid() of each process"
grep -q "^capture: forks.mtr: .* 3 processes" "$T/forks.mtr.err" && ok ||
	bad "the summary counts the processes: $(tail -1 "$T/forks.mtr.err")"
# after the fork, the child and then the parent map 4 MiB without a hint (Valgrind gives both
# the same trace address): with os.layout: kernel each mapping is its own process's, so the
# child's second pass over its pages takes no fault and adds no RSS (tests/capture/fork_mmap.c)
cc -std=gnu11 -O1 -static -no-pie -o "$T/fork_mmap" tests/capture/fork_mmap.c 2>"$T/cc.err" ||
	bad "cc fork_mmap.c: $(head -1 "$T/cc.err")"
cap fork_mmap.mtr ./fork_mmap || bad "capture -- ./fork_mmap: $(tail -1 "$T/fork_mmap.mtr.err")"
"$MMUSIM" run "$T/fork_mmap.mtr" -q --set os.layout=kernel --steps "$T/fork_mmap.csv" 2>"$T/fm.err" ||
	bad "run fork_mmap.mtr: $(tail -1 "$T/fm.err")"
# process,pgfault,rss_bytes of marker 0 (the child's first) and 2 (its last)
check "$(awk -F, 'NR > 1 && $3 == 1 { print $4, $6 }' "$T/fork_mmap.csv" | uniq | wc -l)" 1 \
	"fork_mmap: the child's own pages again, no fault, no RSS (each process its own layout)"
# a program that does not fork: the same file, byte for byte, at two captures in a row
cap direct2.mtr ./pages 64 || bad "capture -- ./pages 64 again"
cap direct3.mtr ./pages 64 || bad "capture -- ./pages 64 a third time"
cmp -s "$T/direct2.mtr" "$T/direct3.mtr" && ok ||
	bad "two captures of ./pages differ: $(cmp -l "$T/direct2.mtr" "$T/direct3.mtr" | head -3 | tr "\n" " ")"
grep -q "^processes:" "$T/direct.info" && bad "a one-process capture has process events" || ok
check "$(od -An -tu1 -j8 -N1 "$T/direct.mtr" | tr -d ' ')" 6 "a capture writes mtr version 6"

# tests/native/procs.c, the two-process programs of the real-kernel comparison: natively and
# captured, the same markers, each set by the same process, in the same (causal) order
cc -std=gnu11 -O1 -static -no-pie -o "$T/procs" tests/native/procs.c 2>"$T/cc.err" || bad "cc procs.c: $(head -1 "$T/cc.err")"
for c in fork-write fork-collapse thp-turns shared-anon; do
	(cd "$T" && ./procs $c >"$T/procs.$c.native" 2>&1) || bad "procs $c natively: $(tail -1 "$T/procs.$c.native")"
	# the native order: each marker's process, by global index
	want=$(sed -n 's/^proc \([0-9]*\) marker \([0-9]*\) .*/\2 \1/p' "$T/procs.$c.native" | sort -n | cut -d' ' -f2 | tr '\n' ' ')
	(cd "$T" && $setarch "$MMUSIM" capture -o procs.$c.mtr -- ./procs $c >"$T/procs.$c.out" 2>"$T/procs.$c.err") ||
		bad "capture -- procs $c: $(tail -1 "$T/procs.$c.err")"
	info "$T/procs.$c.mtr" >"$T/procs.$c.info"
	grep -q "^processes:    2; fork 1 switch [0-9]* exit 2 exec 0 prctl 0\$" "$T/procs.$c.info" && ok ||
		bad "procs $c: $(grep '^processes' "$T/procs.$c.info")"
	check "$(sed -n 's/^marker procs: //p' "$T/procs.$c.info") " "$want" "procs $c: each marker's process in causal order"
done

# --- damaged version 6 files: exit 2 and a message, never a crash -------------------------------
sz=$(stat -c %s "$T/forks.mtr")
for cut in 17 100 $((sz / 3)) $((sz / 2)) $((sz - 1)); do
	head -c $cut "$T/forks.mtr" >"$T/cut.mtr"
	"$MMUSIM" trace info "$T/cut.mtr" >/dev/null 2>"$T/cut.err"
	check "$?" 2 "forks.mtr cut at byte $cut: exit 2"
	grep -q "^$T/cut.mtr: truncated mtr trace at byte $cut\$" "$T/cut.err" && ok ||
		bad "cut at $cut: $(tail -1 "$T/cut.err")"
done
# every process event's id garbled in turn (a switch to a new id is valid: some stay 0)
for seed in 1 2 3 4 5 6 7 8; do
	cp "$T/forks.mtr" "$T/garble.mtr"
	printf "$(printf '\\%03o' $((seed * 37 % 256)))" |
		dd of="$T/garble.mtr" bs=1 seek=$((sz * seed / 9)) conv=notrunc 2>/dev/null
	"$MMUSIM" trace info "$T/garble.mtr" >/dev/null 2>"$T/garble.err"
	rc=$?
	{ [ $rc = 0 ] || { [ $rc = 2 ] && grep -q "^$T/garble.mtr: " "$T/garble.err"; }; } && ok ||
		bad "garbled at byte $((sz * seed / 9)): exit $rc: $(tail -1 "$T/garble.err")"
done

# --- an exec that cannot be followed: exit 1, the program named ------------------------------
# a 32-bit ELF: Valgrind's launcher finds no mmusim tool for x86-linux
printf '\177ELF\001\001\001\000\000\000\000\000\000\000\000\000\002\000\003\000\001\000\000\000T\200\004\0104\000\000\000\000\000\000\000\000\000\000\0004\000 \000\001\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\000\200\004\010\000\200\004\010\134\000\000\000\134\000\000\000\005\000\000\000\000\020\000\000\270\001\000\000\000\315\200\000' >"$T/elf32"
chmod +x "$T/elf32"
cap elf32.mtr env ./elf32
check "$?" 1 "env ./elf32: exit 1"
grep -q "^capture: cannot follow the exec of ./elf32: " "$T/elf32.mtr.err" && ok ||
	bad "the message names ./elf32: $(tail -1 "$T/elf32.mtr.err")"
[ -e "$T/elf32.mtr" ] && bad "a trace was left for ./elf32" || ok
# in place, past the hold: the first image's trace is written already
(cd "$T" && $setarch "$MMUSIM" capture -o /dev/null -- \
	sh -c 'i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; exec ./pages 64' >/dev/null 2>"$T/null.err")
check "$?" 1 "an exec after 16 MiB written to /dev/null: exit 1"
grep -q "^capture: cannot follow the exec of ./pages: the trace before it (over 16 MiB) is already written to /dev/null" \
	"$T/null.err" && ok || bad "the message: $(tail -1 "$T/null.err")"

# lackey: its log descriptor does not survive an exec; a log that ends in execve() fails
(cd "$T" && "$MMUSIM" capture --tool=lackey -o lackey.zst -- env ./pages 4 >/dev/null 2>"$T/lackey.err")
check "$?" 1 "--tool=lackey -- env ./pages: exit 1"
check "$(tail -1 "$T/lackey.err")" \
	"capture: cannot follow the exec of ./pages with --tool=lackey (its log ends there); the default tool follows it" \
	"--tool=lackey names the exec'd program"
[ -e "$T/lackey.zst" ] && bad "a lackey trace was left" || ok

# make demo, the README's set-up, builds the capture tool too (dry run into a scratch build dir)
if command -v make >/dev/null 2>&1 && [ -f Makefile ]; then
	make -n demo BUILD="$T/build" 2>/dev/null | grep -q 'mm_main\.vg\.o' && ok ||
		bad "make demo does not build the capture tool (vgtool)"
fi

echo "  e2e_capture: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
