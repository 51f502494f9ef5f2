#!/bin/bash
# e2e_processes.sh - several traces as processes of one machine on the command
# line: `run A B` and its processes: list, config show, the validation of the
# list and of sched.quantum (file:line:col, exit 2), the input conflicts, and a
# sweep over mixes of processes (sim/trace_mux.c, config.c, sweep.c). With a
# machine that runs several processes the reports, the sweep's CSV and its
# resume are checked; without one, the replay's stop at the first process
# event, at the record the quantum decides.
MMUSIM=${MMUSIM:-./mmusim}
case $MMUSIM in /*) ;; *) MMUSIM=$(pwd)/$MMUSIM ;; esac
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

cd "$T" || exit 1
"$MMUSIM" trace gen -w stream:size=64K,iterations=1 -o a.mtr || exit 1
"$MMUSIM" trace gen -w gups:size=64K,updates=100 -o b.mtr || exit 1
mkdir sub && cp a.mtr sub/t.mtr

# --- the config ------------------------------------------------------------------
# one trace: no sched or processes keys (its config and config_hash unchanged)
"$MMUSIM" config show >one.yaml
check "$(grep -c -e '^sched:' -e '^processes:' one.yaml)" 0 "config show without processes: no sched, no list"
# config show A B: run A B's config, the list with the defaults
"$MMUSIM" config show a.mtr b.mtr >two.yaml
check "$(tail -4 two.yaml)" 'sched: { quantum: 8400000 }
processes:
  - { trace: "a.mtr", start: 0, repeat: 1, thp_disable: false }
  - { trace: "b.mtr", start: 0, repeat: 1, thp_disable: false }' "config show A B: the processes list"
"$MMUSIM" config show --set 'processes=[a.mtr, b.mtr]' >set.yaml
check "$(cmp -s two.yaml set.yaml && echo same)" same "run A B is --set processes=[A, B]"
check "$(diff <(head -n -4 two.yaml) one.yaml && echo same)" same "nothing else differs"
# a file's traces are relative to its directory, every key taken
printf 'processes:\n  - t.mtr\n  - { trace: t.mtr, start: 7, repeat: 2, thp_disable: true }\nsched: { quantum: 1000 }\n' >sub/c.yaml
"$MMUSIM" config show -c sub/c.yaml >c.yaml
check "$(tail -4 c.yaml)" 'sched: { quantum: 1000 }
processes:
  - { trace: "sub/t.mtr", start: 0, repeat: 1, thp_disable: false }
  - { trace: "sub/t.mtr", start: 7, repeat: 2, thp_disable: true }' "config show of a file's processes"
"$MMUSIM" config show -c c.yaml >c2.yaml
check "$(cmp -s c.yaml c2.yaml && echo same)" same "the shown config loads back unchanged (here)"
# a quantum other than the default is shown without processes too
check "$("$MMUSIM" config show --set sched.quantum=5 | grep -c '^sched: { quantum: 5 }$')" 1 \
	"sched.quantum shown when not its default"

# --- bad lists: file:line:col, exit 2 ----------------------------------------------
bad_cfg() { # bad_cfg NAME YAML EXPECTED
	printf '%b' "$2" >"$1.yaml"
	expect_error "$1.yaml:$3" "$MMUSIM" run -c "$1.yaml"
}
bad_cfg r0 'processes:\n  - { trace: a.mtr, repeat: 0 }\n' \
	"2:29: processes[0].repeat: expected an integer from 1 to 1000000, got '0'"
bad_cfg key 'processes:\n  - { trace: a.mtr, rpeat: 2 }\n' \
	"2:21: processes[0]: unknown key 'rpeat' (expected trace or workload, start, repeat and thp_disable)"
bad_cfg missing 'processes:\n  - a.mtr\n  - nope.mtr\n' \
	"3:5: processes[1].trace: nope.mtr: No such file or directory"
bad_cfg scalar 'processes: a.mtr\n' \
	"1:1: processes: expected a list of traces or of mappings of trace or workload, start, repeat and thp_disable, got a scalar"
bad_cfg notrace 'processes:\n  - { start: 5 }\n' "2:5: processes[0]: no trace"
bad_cfg stdin 'processes: [-]\n' \
	"1:13: processes[0].trace: standard input cannot be one of several processes (it can be read only once): give a file"
bad_cfg q0 'sched:\n  quantum: 0\n' "2:3: sched.quantum: must be greater than 0"
bad_cfg start 'processes:\n  - { trace: a.mtr, start: -1 }\n' \
	"2:28: processes[0].start: expected a number of instructions (a non-negative integer), got '-1'"
bad_cfg thp 'processes:\n  - { trace: a.mtr, thp_disable: maybe }\n' \
	"2:34: processes[0].thp_disable: expected true or false, got 'maybe'"
bad_cfg many "processes:\n$(for i in $(seq 65); do printf '  - a.mtr\\n'; done)" \
	"66:5: processes: more than 64 processes"
expect_error "--set processes=[{trace: a.mtr, repeat: 1000001}]: processes[0].repeat: expected an integer from 1 to 1000000, got '1000001'" \
	"$MMUSIM" run --set 'processes=[{trace: a.mtr, repeat: 1000001}]'

# --- the command line --------------------------------------------------------------
expect_error "nope.mtr: No such file or directory" "$MMUSIM" run a.mtr nope.mtr
expect_error "standard input cannot be one of several processes" "$MMUSIM" run a.mtr -
expect_error "mmusim: give a TRACE or -w WORKLOAD, not both" "$MMUSIM" run -w stream a.mtr b.mtr
printf 'processes: [a.mtr]\n' >p.yaml
expect_error "mmusim: the config's processes: list is the input: give no TRACE" "$MMUSIM" run -c p.yaml a.mtr
expect_error "mmusim: the config's processes: list is the input: give no -w WORKLOAD" \
	"$MMUSIM" run -c p.yaml -w stream
expect_error "mmusim: config: unexpected argument 'a.mtr'" "$MMUSIM" config show a.mtr
# run A B is its processes: list: the same stream, the same result (the report,
# or while no machine runs several processes the same refusal)
"$MMUSIM" run a.mtr b.mtr --set sched.quantum=10000 --json ab.json -q 2>ab.err
rc_ab=$?
"$MMUSIM" run --set 'processes=[a.mtr, b.mtr]' --set sched.quantum=10000 --json set.json -q 2>set.err
check "$?" "$rc_ab" "run A B and --set processes=[A, B]: the same exit status"
check "$(cmp -s ab.err set.err && echo same)" same "run A B and --set processes=[A, B]: the same stderr"
if [ "$rc_ab" -eq 2 ]; then
	# no machine runs several processes yet: the replay stops at the first process
	# event, the switch after 1000 instructions of a (a's exit at its end with the
	# default quantum, past a's 106496 instructions)
	expect_error "a.mtr + b.mtr: record 669: switch: a trace of several processes needs a machine that runs them" \
		"$MMUSIM" run a.mtr b.mtr --set sched.quantum=1000
	expect_error "a.mtr + b.mtr: record 65540: exit: a trace of several processes needs a machine that runs them" \
		"$MMUSIM" run a.mtr b.mtr
	machine=no
else
	# the machine runs them: a is 11 slices of 10000, b 4, so 4 switches to b and 4 back
	check "$rc_ab" 0 "run A B runs"
	check "$(diff <(strip <ab.json) <(strip <set.json) && echo same)" same "run A B: the report of its processes: list"
	check "$(grep -c '"trace": "a.mtr + b.mtr",' ab.json)" 1 "the report names every trace"
	check "$(grep -c '"input_id": "processes:2:[0-9a-f]\{32\}"' ab.json)" 1 "the input identity covers both traces"
	check "$(field ab.json sched context_switches)" 8 "8 context switches at a quantum of 10000"
	check "$(field ab.json refs instructions)" 140464 "every instruction of both traces"
	machine=yes
fi
# one TRACE is still the plain replay: no process event
"$MMUSIM" run a.mtr -q
check "$?" 0 "run A: one trace replays as before"

# trace info A B: the interleaved stream counted, with its process events
"$MMUSIM" trace info a.mtr b.mtr >info.txt
check "$(sed -n '1p;3p;$p' info.txt)" "trace:        a.mtr + b.mtr
records:      0 ifetch, 16384 load, 40960 store, 100 modify, 7 events
processes:    2 traces, slices of 8400000 instructions: switch 1 exit 2 prctl 0 fork 0 exec 0" \
	"trace info A B"
expect_error "nope.mtr: No such file or directory" "$MMUSIM" trace info a.mtr nope.mtr

# --- sweeps over mixes -------------------------------------------------------------
cat >sub/mix.yaml <<'Y'
sweep:
  processes: [[t.mtr], [t.mtr, {trace: t.mtr, start: 1000}]]
  os.mode: [base, thp]
Y
"$MMUSIM" sweep sub/mix.yaml --list >list.txt
check "$?" 0 "sweep --list over mixes"
check "$(sed -n 3p list.txt | sed 's/point-000002-[0-9a-f]*\.json$/point-000002-H.json/')" \
	"mmusim run --label point=2 --label points=4 --set 'processes=[\"sub/t.mtr\", {trace: \"sub/t.mtr\", \"start\": \"1000\"}]' --label 'processes=t.mtr + t.mtr(start=1000)' --sweep-set os.mode=base --quiet --json mix.csv.d/point-000002-H.json" \
	"a point's command: the mix resolved, its name as written"
check "$(wc -l <list.txt)" 4 "two mixes by two modes"
printf 'trace: t.mtr\nsweep:\n  processes: [[t.mtr]]\n' >sub/both.yaml
expect_error "sub/both.yaml:1:1: the processes (a processes axis, or the config's processes: list) are the input" \
	"$MMUSIM" sweep sub/both.yaml --list
printf 'sweep:\n  processes: [[t.mtr], [t.mtr, gone.mtr]]\n' >sub/gone.yaml
expect_error "sub/gone.yaml:2:24: processes[1].trace: sub/gone.mtr: No such file or directory" \
	"$MMUSIM" sweep sub/gone.yaml --list
printf 'sweep:\n  processes: [t.mtr]\n' >sub/flat.yaml
expect_error "sub/flat.yaml:2:15: processes: each value is a list of processes" \
	"$MMUSIM" sweep sub/flat.yaml --list
# a config with a processes list is every point's input
printf 'config: c2.yaml\nsweep:\n  os.mode: [base, thp]\n' >sub/cfg.yaml
printf 'processes: [t.mtr, t.mtr]\n' >sub/c2.yaml
"$MMUSIM" sweep sub/cfg.yaml --list >cl.txt
check "$(grep -c "^mmusim run -c sub/c2.yaml --label point=[01] --label points=2 --sweep-set os.mode=" cl.txt)" 2 \
	"a config's processes: no TRACE on the points' commands"
# the points run (or, while no machine runs several processes, stop at the first
# process event); a resumed sweep reruns a mix whose trace changed
"$MMUSIM" sweep sub/mix.yaml -j1 -o mix.csv >/dev/null 2>err.txt
rc=$?
if [ "$machine" = no ]; then
	check "$rc" 2 "a sweep over mixes reaches the replay"
	check "$(grep -c 'exit: a trace of several processes needs a machine that runs them' err.txt)" 1 \
		"the sweep's replay stops at the first process event"
else
	check "$rc" 0 "a sweep over mixes runs"
	check "$(cut -d, -f1-4 mix.csv | sed -n '1p;4p;5p')" "point,processes,os.mode,refs.instructions
2,t.mtr + t.mtr(start=1000),base,212992
3,t.mtr + t.mtr(start=1000),thp,212992" "the CSV names each mix"
	"$MMUSIM" sweep sub/mix.yaml -j1 -o mix.csv 2>err.txt >/dev/null
	check "$(grep -c '4 of 4 points reused' err.txt)" 1 "a resumed sweep reuses every mix"
	"$MMUSIM" trace gen -w stream:size=64K,iterations=2 -o sub/t.mtr
	"$MMUSIM" sweep sub/mix.yaml -j1 -o mix.csv 2>err.txt >/dev/null
	check "$(grep -c '0 of 4 points reused from mix.csv.d; 4 rerun' err.txt)" 1 \
		"a changed trace: every mix runs again"
	check "$(cut -d, -f4 mix.csv | sed -n '2p;4p' | tr '\n' ' ')" "163840 327680 " \
		"with the new trace (two iterations: 163840 instructions)"
fi

echo "  e2e_processes: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
