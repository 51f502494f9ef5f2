#!/bin/bash
# e2e_overlap.sh - cpu.model on the command line: every report names the core that
# made its cycles (text, JSON, the --modes table), the overlap core's counts on a
# built-in workload, and its keys' bad values (exit 2). tests/check_overlap.c checks
# the model's times on hand-built streams.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

W=gups:size=4M
# the default: additive, and the same counts and cycles as before the overlap core
"$MMUSIM" run -w $W >"$T/a.txt" || bad "run (additive)"
check "$(sed -n 2p "$T/a.txt")" "  core: additive; dependences: recorded" "text: the core"
"$MMUSIM" run -w $W --json "$T/a.json" --quiet || bad "run --json (additive)"
check "$(grep -o '"cpu_model": "[a-z]*"' "$T/a.json")" '"cpu_model": "additive"' "JSON run.cpu_model"
check "$(grep -o '"dependences": "[a-z]*"' "$T/a.json")" '"dependences": "recorded"' "JSON run.dependences"
# a lackey trace records none: the documented assumption is said
"$MMUSIM" run tests/validation/small.lackey.zst --set cpu.model=overlap >"$T/l.txt" || bad "run (lackey)"
check "$(sed -n 2p "$T/l.txt")" "  core: overlap; dependences: unknown, assumed independent" "text: a lackey trace's dependences"
check "$(field "$T/a.json" cycles total)" 47693488 "additive cycles.total"
check "$(field "$T/a.json" cycles translation_stall)" "$(field "$T/a.json" cycles translation)" \
	"additive: every translation cycle stalls"

# overlap: the same counts, its own time
"$MMUSIM" run -w $W --set cpu.model=overlap >"$T/o.txt" || bad "run (overlap)"
check "$(sed -n 2p "$T/o.txt")" "  core: overlap; dependences: recorded" "text: the overlap core"
"$MMUSIM" run -w $W --set cpu.model=overlap --json "$T/o.json" --quiet || bad "run --json (overlap)"
check "$(grep -o '"cpu_model": "[a-z]*"' "$T/o.json")" '"cpu_model": "overlap"' "JSON run.cpu_model overlap"
check "$(field "$T/o.json" cycles total)" 27741288 "overlap cycles.total"
check "$(field "$T/o.json" cycles translation)" 19963568 "overlap: translation busy time as additive's"
check "$(field "$T/o.json" cycles translation_stall)" 11368 "overlap: the translation stall"
check "$(field "$T/o.json" walk walks)" "$(field "$T/a.json" walk walks)" "overlap: the same walks"

# the --modes table's corner
"$MMUSIM" run -w $W --modes base,thp --set cpu.model=overlap >"$T/m.txt" || bad "run --modes"
check "$(sed -n 2p "$T/m.txt" | awk '{ print $1, $2 }')" "core: overlap" "--modes table names the core"
"$MMUSIM" run -w $W --modes base,thp >"$T/m2.txt" || bad "run --modes (additive)"
check "$(sed -n 2p "$T/m2.txt" | awk '{ print $1, $2 }')" "core: additive" "--modes table names additive"

# config show writes the core's keys
check "$("$MMUSIM" config show | grep -c 'model: additive, rob: 128\|walkers: 1\|mshrs: 10')" 3 \
	"config show: the core's keys"

# bad values
expect_error "--set cpu.model=fast: cpu.model: unknown value 'fast' (expected additive or overlap)" "$MMUSIM" run -w $W --set cpu.model=fast
expect_error "--set walk.walkers=0: walk.walkers: must be greater than 0" "$MMUSIM" run -w $W --set walk.walkers=0
expect_error "--set: cpu.cpi: 0.1 cycles per instruction is faster than 4 instructions retired a cycle" \
	"$MMUSIM" run -w $W --set cpu.model=overlap --set cpu.cpi=0.1
printf 'cpu:\n  model: overlap\n  width: 0\n' >"$T/bad.yaml"
expect_error "$T/bad.yaml:3:3: cpu.width: must be greater than 0" "$MMUSIM" run -c "$T/bad.yaml" -w $W

echo "  e2e_overlap: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
