#!/bin/sh
# Run every Check suite given as an argument, then the scripted tests -- the
# command line end to end (tests/e2e.sh), a sweep's inputs checked up front
# (tests/e2e_sweep_inputs.sh), the library as another program embeds it
# (tests/e2e_embed.sh), the committed traces/ (tests/e2e_traces.sh), the
# manual's coverage (tests/man.sh), the documentation's examples
# (tests/doc_examples.sh; the e2e scripts share tests/e2e_lib.sh) and the
# markers with run --steps and config host (tests/e2e_steps.sh), the region
# of interest (tests/e2e_roi.sh), the per-mapping breakdown (tests/vmas.sh), workload
# parameter sweeps and figures on the command line (tests/e2e_figs.sh), figures of
# real captures, plot --where/--facet/--size (tests/e2e_plots.sh), mmusim mrc
# (tests/e2e_mrc.sh), capture through env, exec and #! scripts (tests/e2e_capture.sh),
# reports that do not mislead (tests/e2e_reports.sh), the
# comparison with this machine's kernel (tests/native.sh, and per mTHP size as root
# tests/native_mthp.sh), the smoke run of make
# native-virt's measurement (tests/virt_native.sh), make native-model's join and make
# native-thp's program (tests/native_model.sh) -- and close
# with the one summary line "N passed, N failed".
# Tests run from the repository root: their data paths are relative to it.
pass=0
fail=0
failed=""
B=${BUILD:-build/release}
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

# run_script NAME WHAT SHELL: run tests/NAME.sh with its output in $B/NAME.log; on
# success one line with WHAT and the script's last line, else the log
run_script() {
	if MMUSIM="$B/mmusim" "$3" "tests/$1.sh" >"$B/$1.log" 2>&1; then
		pass=$((pass + 1))
		echo "  ok    $1 ($2: $(tail -1 "$B/$1.log" | sed 's/^ *//'))"
	else
		fail=$((fail + 1))
		failed="$failed $1"
		echo "  FAIL  $1"
		grep -v '^ok' "$B/$1.log" | sed 's/^/        /' | tail -60
	fi
}
run_script e2e "the command line end to end" bash
run_script e2e_sweep_inputs "a sweep's workload specs and traces checked before any point runs" bash
run_script e2e_embed "examples/embed.c and the installed library print the CLI's counts" sh
run_script e2e_traces "the committed traces" bash
run_script e2e_deps "dependences: DEP records, trace info, a capture of a list walk" bash
run_script layout_native "os.layout: kernel against this machine's Linux, setarch -R" bash
run_script synopsis "one synopsis per command in README, man page and help, each option known" bash
run_script man "every config key, command and kernel counter documented in doc/mmusim.1 (counters and kernel knobs with their Linux version and function)" sh
run_script doc_examples "every command and YAML block of README.md and doc/mmusim.1" bash
run_script e2e_profile "os.profile osless gives DynamoRIO's counts from the command line; --set without '='" bash
run_script e2e_steps "markers, run --steps and config host on the command line" bash
run_script e2e_overlap "cpu.model overlap on the command line: every report names the core, its counts, bad values" bash
run_script e2e_roi "the region of interest: run --skip-refs & co., --modes, sweeps" bash
run_script vmas "run --vmas, --vmas-csv and the per-mapping JSON against golden and totals" bash
run_script e2e_figs "workload.size swept as numbers, OUT.reps.csv, plot to PDF, --logy, -y A,B, --abs" bash
run_script e2e_outputs "outputs: bounded timelines, SIGTERM, none replacing an input or another, opened before the work" bash
run_script e2e_plots "figures of real captures: --vmas-csv names, sweep --plot facets, plot --where, --size" bash
run_script e2e_mrc "mmusim mrc: rows against run, the CSV, figures, bad input" bash
run_script e2e_mthp "anonymous multi-size THP: os.thp.sizes.* keys, bad values, the report's per-size counters" bash
run_script e2e_underused "the underused THP shrinker (6.12+), os.thp.shrink_underused, the text and --vmas rows of the mTHP sizes" bash
run_script e2e_reports "memory peaks and time-weighted coverage, the timeline's TLB misses, one name per counter, 1G fractures, empty-input warnings" bash
run_script e2e_virt "virtual machines: bare metal unchanged, keys, bad values, sweeps, the experiment's claims" bash
run_script e2e_populate "populate and mlock: mtr version 5 replayed, trace info, convert, a capture of mlock calls" bash
run_script e2e_folio "large page-cache folios: os.file_cache_folio_size, a fault per folio on 6.18" bash
run_script e2e_flushes "MAP_HUGETLB page sizes, os.hugetlbfs.default_size, the reservation warning, a skipped flush" bash
run_script e2e_pcid "cpu.pcid: config show, the machine files, bad values, one process unchanged" bash
run_script e2e_coalesce "tlb.coalesce: keys, errors, exact counts of contiguous and backward frames" bash
run_script e2e_processes "several traces as processes: run A B, the processes: list, sched.quantum, sweeps over mixes" bash
run_script e2e_experiments "per-process timeline and fault latency, the kv workload, workload processes, the experiments kv-bloat, ingens-fairness, cbmm-latency, mthp (os.thp_anon, scalar tlb.coalesce), merge --latency" bash
run_script e2e_capture "capture follows exec (env, sh -c exec, #! scripts) and fork (one mtr v6 file, every process)" bash
run_script native "tests/native/ programs: this kernel's faults, Rss and THP events against the replay" bash
run_script native_procs "tests/native/procs.c: two processes' faults, Rss and THP events against the replay, per step" bash
run_script native_mthp "tests/native/mthp.c as root: each mTHP size set in turn, faults, Rss and every hugepages-<size>kB counter against the replay, per step" bash
run_script native_guest "make native-guest's plumbing: NATIVE_GUEST refused when unknown, a guest without qemu or kernel skipped" bash
run_script virt_native "tests/native/virt_chase.c --quick and virt_measure.sh: make native-virt's program runs and writes its CSV" bash
run_script native_model "tests/native/model_compare.sh: make native-model's join of native and model times, on fixed CSVs" bash
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
