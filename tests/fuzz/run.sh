#!/bin/sh
# Build every libFuzzer harness (tests/fuzz/fuzz_*.c) with clang, ASan and
# UBSan into build/fuzz/, and run each for FUZZ_SECONDS (default 60) on a
# scratch copy of its seed corpus (tests/fuzz/corpus/NAME/): nothing is ever
# written into the repository. One line per harness; crash, leak and timeout
# inputs go to build/fuzz/crashes/NAME/; the exit status is 1 if any harness
# failed.
#
#   sh tests/fuzz/run.sh [NAME...]      from the repository root; NAME as in fuzz_NAME.c
#
# Environment: FUZZ_SECONDS (60), FUZZ_JOBS (harnesses run at once: 2),
# FUZZ_TIMEOUT (seconds one input may take: 10), FUZZ_MAX_LEN (bytes: 8192),
# CC (clang), FUZZ_BUILD_ONLY=1 (build, do not run).
set -u

cd "$(dirname "$0")/../.." || exit 2
CC=${CC:-clang}
case $CC in cc | gcc*) CC=clang ;; esac # make's default CC cannot build libFuzzer targets
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-2}
TIMEOUT=${FUZZ_TIMEOUT:-10}
MAX_LEN=${FUZZ_MAX_LEN:-8192}
OUT=build/fuzz
PKGS="gsl yaml-0.1 zlib liblzma libzstd jansson"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
WARN="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes"
CFLAGS="-std=c11 -D_GNU_SOURCE $WARN -g -O1 -fno-omit-frame-pointer $SAN $(pkg-config --cflags $PKGS)"
LIBS="$(pkg-config --libs $PKGS) -lpthread -lm"

if [ $# -gt 0 ]; then
	names="$*"
else
	names=$(ls tests/fuzz/fuzz_*.c | sed 's|tests/fuzz/fuzz_||; s|\.c$||')
fi

# --- build: the simulator's sources once (coverage-instrumented), then each harness
mkdir -p "$OUT/obj" || exit 2
objs=""
for src in sim/*.c; do
	case "$src" in sim/main.c | sim/cli*.c) continue ;; esac
	obj="$OUT/obj/$(basename "$src" .c).o"
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find sim -name '*.h' -newer "$obj")" ]; then
		$CC $CFLAGS -fsanitize=fuzzer-no-link -c -o "$obj" "$src" || { echo "fuzz: build failed: $src"; exit 2; }
	fi
	objs="$objs $obj"
done
# the harnesses' shared checks are not coverage-instrumented: only the parsers guide the fuzzer
$CC $CFLAGS -c -o "$OUT/obj/fuzz_common.o" tests/fuzz/common.c ||
	{ echo "fuzz: build failed: tests/fuzz/common.c"; exit 2; }
for name in $names; do
	src=tests/fuzz/fuzz_$name.c
	[ -f "$src" ] || { echo "fuzz: no harness $src"; exit 2; }
	$CC $CFLAGS -fsanitize=fuzzer -DFUZZ_MAIN -o "$OUT/fuzz_$name" "$src" \
		"$OUT/obj/fuzz_common.o" $objs $LIBS || { echo "fuzz: build failed: $src"; exit 2; }
done
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

# --- run: one harness on a scratch corpus; writes $OUT/work/NAME/{log,result}
run_one() {
	name=$1
	work=$OUT/work/$name
	rm -rf "$work"
	mkdir -p "$work/corpus" "$work/tmp" "$OUT/crashes/$name"
	[ -d "tests/fuzz/corpus/$name" ] && cp tests/fuzz/corpus/"$name"/* "$work/corpus/" 2>/dev/null
	[ -d "tests/fuzz/regress/$name" ] && cp tests/fuzz/regress/"$name"/* "$work/corpus/" 2>/dev/null
	# stdin from /dev/null: a sweep file may name /dev/stdin as its config
	TMPDIR=$work/tmp "$OUT/fuzz_$name" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" \
		-max_len="$MAX_LEN" -print_final_stats=1 -artifact_prefix="$OUT/crashes/$name/" \
		"$work/corpus" </dev/null >"$work/log" 2>&1
	rc=$?
	status=$(grep 'cov:' "$work/log" | tail -1)
	cov=$(echo "$status" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$status" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
	corp=$(ls "$work/corpus" | wc -l)
	if [ $rc -eq 0 ]; then
		line="ok     $name: ${SECONDS_EACH}s, ${runs:-?} runs (${eps:-?}/s), corpus $corp, cov ${cov:-?}, ft ${ft:-?}"
	else
		what=$(grep -o -m1 'ERROR: [A-Za-z]*: [a-z-]*\|ERROR: libFuzzer: [a-z-]*\|fuzz check failed.*' "$work/log" | head -1)
		art=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$work/log" | tail -1)
		line="FAILED $name: ${what:-exit $rc} -> ${art:-$work/log} (log: $work/log)"
	fi
	echo "$line" >"$work/result"
	echo "$line"
	return $rc
}

fail=0
set -- $names
while [ $# -gt 0 ]; do
	pids=""
	i=0
	while [ $# -gt 0 ] && [ $i -lt "$JOBS" ]; do
		run_one "$1" >/dev/null &
		pids="$pids $!:$1"
		shift
		i=$((i + 1))
	done
	for p in $pids; do
		wait "${p%%:*}" || fail=1
		cat "$OUT/work/${p#*:}/result"
	done
done
exit $fail
