#!/bin/sh
# Run every Check suite given as an argument, then the end-to-end tests
# (tests/e2e.sh, tests/e2e_embed.sh), and close with the one summary line "N passed, N failed".
# Tests run from the repository root: their data paths are relative to it.
pass=0
fail=0
failed=""
for t in "$@"; do
	name=$(basename "$t")
	if "$t" >"$t.log" 2>&1; then
		pass=$((pass + 1))
		printf '  ok    %s (%s)\n' "$name" "$(grep -o '[0-9]*%: Checks: [0-9]*' "$t.log" | tail -1)"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		printf '  FAIL  %s\n' "$name"
		sed 's/^/        /' "$t.log" | tail -40
	fi
done
if MMUSIM="${BUILD:-build/release}/mmusim" bash tests/e2e.sh; then
	pass=$((pass + 1))
	echo "  ok    e2e"
else
	fail=$((fail + 1))
	failed="$failed e2e"
	echo "  FAIL  e2e"
fi
if MMUSIM="${BUILD:-build/release}/mmusim" sh tests/e2e_embed.sh; then
	pass=$((pass + 1))
	echo "  ok    e2e_embed (examples/embed.c and the installed library print the CLI's counts)"
else
	fail=$((fail + 1))
	failed="$failed e2e_embed"
	echo "  FAIL  e2e_embed"
fi
if MMUSIM="${BUILD:-build/release}/mmusim" sh tests/man.sh >"${BUILD:-build/release}/man.log" 2>&1; then
	pass=$((pass + 1))
	echo "  ok    man (every config key and command documented in doc/mmusim.1)"
else
	fail=$((fail + 1))
	failed="$failed man"
	echo "  FAIL  man"
	sed 's/^/        /' "${BUILD:-build/release}/man.log"
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
