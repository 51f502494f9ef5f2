#!/bin/bash
# layout_native.sh - os.layout: kernel against the real kernel: tests/capture/layout.c
# run natively without address-space randomization (setarch -R) prints where Linux put
# its mappings; the same program captured by mmusim's Valgrind tool and read with
# `mmusim trace info --layout RELEASE` must show them at the same addresses: the
# program's own mmaps (hint-less 64 MiB, 3 MiB + 4 KiB, a 4 MiB file mapping at offset
# 1 MiB, a taken hint, an mremap that moves), the heap, and the span of every file
# (the program, libc, ld.so). Skips when valgrind or the tool is missing, setarch
# cannot turn randomization off, or the running kernel is not a modelled release.
set -u
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
skip() { echo "layout_native: SKIP: $*"; exit 0; }

rel=$(uname -r | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
rel=${LAYOUT_RELEASE:-$rel} # to try another release's layout against this kernel
case "$rel" in 6.6 | 6.8 | 6.12 | 6.18) ;; *) skip "Linux $rel is not one of mmusim's os.kernel releases" ;; esac
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
setarch -R true 2>/dev/null || skip "setarch -R does not work here"
cc -O1 -o "$T/layout" tests/capture/layout.c || { echo "cannot compile tests/capture/layout.c"; exit 1; }
setarch -R "$T/layout" "$T/data" >"$T/native" || { echo "the native run failed"; exit 1; }
"$MMUSIM" capture -o "$T/layout.mtr" -- "$T/layout" "$T/data" >"$T/cap.out" 2>&1 ||
	skip "capture failed: $(tail -1 "$T/cap.out")"
grep -q 'mmusim-amd64-linux' <("$MMUSIM" trace info "$T/layout.mtr") ||
	skip "not captured by mmusim's own tool (lackey fallback): no initial mappings"
"$MMUSIM" trace info --layout "$rel" "$T/layout.mtr" | sed -n '/^kernel layout/,$p' | tail -n +2 >"$T/model"

fail=0 n=0
for name in heap a b f h m; do
	addr=$(awk -v n="$name" '$1 == n { sub(/^0x/, "", $2); print $2 }' "$T/native")
	n=$((n + 1))
	if ! grep -q "^0*$addr-" "$T/model"; then
		echo "FAIL: $name: Linux put it at 0x$addr; mmusim's kernel layout has no mapping starting there"
		fail=$((fail + 1))
	fi
done
# each file's span: lowest start, highest end (hex padded to 16 digits compares as text)
span() { awk -v f="$2" 'function pad(x) { x = sprintf("%16s", x); gsub(/ /, "0", x); return x }
	$NF == f { split($1, r, "-"); s = pad(r[1]); e = pad(r[2]);
		if (lo == "" || s < lo) lo = s; if (e > hi) hi = e }
	END { print lo "-" hi }' "$1"; }
for f in $(awk '$6 ~ /^\// { print $6 }' "$T/native" | sort -u); do
	n=$((n + 1))
	want=$(span "$T/native" "$f")
	got=$(awk '{ print $1, $2 }' "$T/model" | span /dev/stdin "$f")
	if [ "$want" != "$got" ]; then
		echo "FAIL: $f: Linux spans $want, mmusim's kernel layout $got"
		fail=$((fail + 1))
	fi
done
if [ "$fail" -ne 0 ]; then
	echo "--- native"; cat "$T/native"; echo "--- mmusim trace info --layout $rel"; cat "$T/model"
	exit 1
fi
echo "layout_native: $n of $n placements as Linux $rel's (setarch -R)"
