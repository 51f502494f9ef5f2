/*
 * usage.c - the command line's texts (usage.h): the man page's SYNOPSIS and
 * COMMANDS in short. tests/man.sh checks that every command named here has its
 * section in doc/mmusim.1.
 */
#include <string.h>

#include "types.h"
#include "usage.h"

const char usage_text[] =
	"usage: mmusim run [-c CONFIG.yaml] [TRACE... | -w WORKLOAD[:key=value,...]] [--format FMT]\n"
	"                  [--set path=value ...] [--modes base,hugetlbfs,thp] [--json FILE|-] [--quiet]\n"
	"                  [--timeline FILE.csv [--timeline-ms MS]] [--steps FILE.csv] [--label key=value ...]\n"
	"                  [--skip-refs N] [--warmup-refs N] [--sim-refs N] [--skip-insns N] [--warmup-insns N]\n"
	"                  [--sim-insns N] [--vmas[=N]] [--vmas-csv FILE.csv]\n"
	"       mmusim config show [-c CONFIG.yaml] [--set path=value ...] [TRACE TRACE...]\n"
	"       mmusim config host [-c CONFIG.yaml] [--set path=value ...]\n"
	"       mmusim trace info TRACE... [--format FMT]\n"
	"       mmusim trace convert IN OUT.mtr[.zst|.gz|.xz] [--format FMT]\n"
	"       mmusim trace gen -w WORKLOAD -o OUT.mtr[.zst]\n"
	"       mmusim capture [-o OUT] [--tool=mmusim|lackey] [--skip-insns N] [--max-insns N] [--roi]\n"
	"                      [--keep-on-failure] -- PROGRAM [ARGS]\n"
	"       mmusim sweep SWEEP.yaml [TRACE | -w WORKLOAD] [-j N] [--shard I/N] [--list] [--outdir DIR]\n"
	"                    [-o OUT.csv] [--plot OUT.png|OUT.svg|OUT.pdf] [--quiet]\n"
	"       mmusim merge [--reps | --latency] OUT.csv RESULT.json...\n"
	"       mmusim plot RESULTS.csv -x KEY -y KEY|A/B|mpki:KEY [--by KEY] [--logx] [--logy]\n"
	"                   [--kind lines|bars|timeline] [--base V] [--abs] [--values] [--table] [--title T]\n"
	"                   [--input NAME] [--where KEY=VALUE ...] [--facet KEY] [--size WxH[in|cm|px]]\n"
	"                   [--font-size PT] -o OUT.png|OUT.svg|OUT.pdf [--script FILE.gp]\n"
	"       mmusim mrc [TRACE | -w WORKLOAD] [-c CONFIG.yaml] [--set path=value ...] [--format FMT]\n"
	"                  [--max-entries N] [--sets S] [-o OUT.csv] [--plot OUT.png|OUT.svg|OUT.pdf]\n"
	"       mmusim demo [--outdir DIR]\n"
	"       mmusim help [CMD]    (or CMD --help)\n"
	"       mmusim version       (or --version)\n"
	"Options take GNU forms: -j2, --jobs=2, -cFILE, --config=FILE, --set=k=v, --json=-.\n"
	"Workloads: stream:size=S[,iterations=N]  gups:size=S[,updates=N]  chase:size=S[,steps=N]\n"
	"           stride:size=S,stride=B[,passes=N]  zipf:size=S,alpha=A,refs=N\n"
	"           kv:size=S[,value=B][,delete=P][,gap=N][,tail=N]  (+ seed=, madvise=1)\n";

static const struct {
	const char *cmd, *text;
} help_texts[] = {
	{ "run",
	  "mmusim run [-c CONFIG.yaml] [TRACE... | -w WORKLOAD[:key=value,...]] [--format FMT]\n"
	  "           [--set path=value ...] [--modes base,hugetlbfs,thp] [--json FILE|-] [--quiet]\n"
	  "           [--timeline FILE.csv [--timeline-ms MS]] [--steps FILE.csv] [--label key=value ...]\n"
	  "           [--skip-refs N] [--warmup-refs N] [--sim-refs N] [--skip-insns N] [--warmup-insns N]\n"
	  "           [--sim-insns N] [--vmas[=N]] [--vmas-csv FILE.csv]\n"
	  "Replay TRACE (lackey, pin, champsim, din or mtr; .gz/.xz/.zst; - for stdin) or a built-in\n"
	  "workload through the configured machine and print the report (text, or JSON with --json).\n"
	  "Several TRACEs run as processes of one machine, round robin in slices of sched.quantum\n"
	  "instructions: the config's processes: list of them (mmusim config show A B prints it).\n"
	  "  -c FILE          machine and kernel config (YAML); default: the built-in Nehalem-class core\n"
	  "  --set path=value override one config key (see 'mmusim config show' for every path)\n"
	  "  --modes a,b,c    run the input once per mode (decoded once) and print the % change table\n"
	  "  --json FILE|-    the report as JSON (written to a temporary name, then renamed)\n"
	  "  --timeline FILE  a CSV row every --timeline-ms (default 1, at least 0.001) of simulated time\n"
	  "  --steps FILE     a CSV row of counters at each marker of the trace (getppid() captured);\n"
	  "                   with a size below 2M enabled, per-size mthp_<S>_<counter> columns too\n"
	  "  --label k=v      record k=v in run.labels (sweeps use it); --sweep-set k=v = --set + --label\n"
	  "  --vmas[=N]       the N (default 10) mappings with the most walk cycles: faults, TLB misses,\n"
	  "                   walks, THP events (and each mTHP size's faults), RSS and why THP is\n"
	  "                   not allowed (smaps' THPeligible)\n"
	  "  --vmas-csv FILE  every mapping as CSV (the top N with --vmas=N); 'plot -x name -y walk_cycles'\n"
	  "  --quiet          no progress, no text report\n"
	  "The region of interest, as DynamoRIO drcachesim's -skip_refs, -warmup_refs, -sim_refs\n"
	  "(a reference: an ifetch, load, store or modify record; N a count, 0 = none):\n"
	  "  --skip-refs N    the first N references are dropped, not simulated: no lookup, walk,\n"
	  "                   fault or counter (a skipped page is not faulted in); the stretch's\n"
	  "                   mapping events (mmap, munmap, mprotect, madvise, brk, mremap) still apply\n"
	  "  --warmup-refs N  the next N are simulated, then every counter is reset to zero; TLBs,\n"
	  "                   caches, page tables, THPs, memory and simulated time stay warm\n"
	  "  --sim-refs N     then N are simulated and counted, and the replay stops (0: no limit)\n"
	  "  --skip-insns N, --warmup-insns N, --sim-insns N   the same in instructions (ifetches,\n"
	  "                   and a workload's counted instructions); each stretch in one unit only\n"
	  "                   (= --set roi.skip_refs=N & co.; the JSON's run.roi says what was left out)\n" },
	{ "sweep",
	  "mmusim sweep SWEEP.yaml [TRACE | -w WORKLOAD] [-j N] [--shard I/N] [--list] [--outdir DIR]\n"
	  "             [-o OUT.csv] [--plot OUT.png|OUT.svg|OUT.pdf] [--quiet]\n"
	  "Run every point of a sweep file (config:, trace: or workload: (a list is swept), or input:\n"
	  "mixing both, format:, repeat:, set:, sweep: {path: [values]}; workload.size, .updates and\n"
	  "the other workload parameters sweep as numbers; processes: [[a, b], [a, c]] sweeps mixes of\n"
	  "processes) and write one CSV row per point (with\n"
	  "repeat: also OUT.reps.csv, one row per repetition).\n"
	  "  -j N          worker processes (default: the cores); points of one input share a decode\n"
	  "  --shard I/N   only every N-th point from I (0-based), e.g. one Slurm array task\n"
	  "  --list        print one self-contained 'mmusim run' command per point instead of running\n"
	  "  --outdir DIR  per-point reports (default OUT.csv.d); finished points are skipped on re-runs\n"
	  "  -o OUT.csv    the CSV (default: the sweep file's name with .csv)\n" },
	{ "merge",
	  "mmusim merge [--reps | --latency] OUT.csv RESULT.json...\n"
	  "Join the per-point reports of a sweep (from --list runs or shards) into the CSV 'sweep -o'\n"
	  "writes: one row per point in point order; repetitions give mean and .ci95 columns.\n"
	  "  --reps   one row per point and repetition (point, rep, ...): plot draws its means with\n"
	  "           error bars, derived quantities (A/B, mpki:) included\n"
	  "  --latency  the reports' per-process fault-latency histograms instead, as CDF rows:\n"
	  "           the labels, mode, process, log2_cycles, cycles_lo, cycles_hi, faults, cdf, ccdf\n" },
	{ "plot",
	  "mmusim plot RESULTS.csv -x KEY -y KEY|A/B|mpki:KEY [--by KEY] [--logx] [--logy]\n"
	  "            [--kind lines|bars|timeline] [--base V] [--abs] [--values] [--table] [--title T]\n"
	  "            [--input NAME] [--where KEY=VALUE ...] [--facet KEY] [--size WxH[in|cm|px]]\n"
	  "            [--font-size PT] -o OUT.png|OUT.svg|OUT.pdf [--script FILE.gp]\n"
	  "Draw a sweep's CSV (or a --timeline CSV) with gnuplot. --script FILE also writes the\n"
	  "gnuplot script, data inline (without -o: only the script, drawing FILE less .gp\n"
	  "plus .png).\n"
	  "  --logx, --logy  log2 x axis, log10 y axis (lines and timelines; values > 0)\n"
	  "  --abs           % change bars: the absolute values in a panel beside them\n"
	  "  --values        bars with --by: the values themselves, a colour per --by value\n"
	  "  --table         % change bars as the mail's table (each value, its % change against\n"
	  "                  --base) on stdout; -o is then optional\n"
	  "  --input NAME    the input named in the title (default: the CSV's input column\n"
	  "                  when it holds one value)\n"
	  "  --where K=V     only the rows whose column K holds V (text, or the same number);\n"
	  "                  repeated: any of a key's values, all of the keys\n"
	  "  --facet KEY     one panel per value of KEY (at most 16), each from its own rows\n"
	  "  --size WxH      the image: 3.3x2.2in, 8.4x5.6cm or 1000x600 (px, the default; 140 to\n"
	  "                  the inch in a PNG or SVG)\n"
	  "  --font-size PT  the text in points (default 11)\n"
	  "-y A/B and mpki: leave out rows whose divisor is 0, counted on stderr.\n" },
	{ "config",
	  "mmusim config show [-c CONFIG.yaml] [--set path=value ...] [TRACE TRACE...]\n"
	  "Print the effective configuration as YAML (every key with its value); with TRACEs, the\n"
	  "configuration of 'run TRACE TRACE...' (its processes: list).\n"
	  "mmusim config host [-c CONFIG.yaml] [--set path=value ...]\n"
	  "The same with this machine's kernel settings (THP sysfs, khugepaged, zero page, release).\n" },
	{ "trace",
	  "mmusim trace info TRACE... [--format FMT]    records by kind, pages, address range, events\n"
	  "                                           (several TRACEs: as run A B interleaves them)\n"
	  "mmusim trace convert IN OUT.mtr[.zst|.gz|.xz] [--format FMT]   to the native format\n"
	  "mmusim trace gen -w WORKLOAD -o OUT.mtr[.zst]  write a built-in workload as a trace\n" },
	{ "capture",
	  "mmusim capture [-o OUT] [--tool=mmusim|lackey] [--skip-insns N] [--max-insns N] [--roi]\n"
	  "               [--keep-on-failure] -- PROGRAM [ARGS]\n"
	  "Run PROGRAM under Valgrind and stream its memory trace, compressed by OUT's suffix (.zst\n"
	  "default). --tool=mmusim (the default): mmusim's own tool writes mtr version 6 (OUT defaults\n"
	  "to PROGRAM.mtr.zst) with the initial mappings, every mmap/munmap/mprotect/madvise/brk/\n"
	  "mremap and mlock-family call, the files mapped (with their filesystem), the thread\n"
	  "switches and, before each reference whose address depends on an earlier load, that\n"
	  "load's distance; --skip-insns/--max-insns or the\n"
	  "MMUSIM_ROI_BEGIN()/END() client requests of mmusim_roi.h (with --roi: nothing before the\n"
	  "first BEGIN) choose a region of interest. The trace follows exec: env PROG, sh -c 'exec\n"
	  "PROG' and #! scripts record PROG; it follows fork: every process the program forks is in\n"
	  "the same file (fork, switch, exit, exec and prctl events), ordered at its system calls.\n"
	  "--tool=lackey: valgrind --tool=lackey --trace-mem=yes --trace-syscalls=yes, its text log\n"
	  "(PROGRAM.lackey.zst). --keep-on-failure keeps the trace of a program exiting non-zero.\n" },
	{ "mrc",
	  "mmusim mrc [TRACE | -w WORKLOAD] [-c CONFIG.yaml] [--set path=value ...] [--format FMT]\n"
	  "           [--max-entries N] [--sets S] [-o OUT.csv] [--plot OUT.png|OUT.svg|OUT.pdf]\n"
	  "Miss-ratio curves in one pass: the exact LRU miss count of an L1 TLB array of every size\n"
	  "from 1 to N entries, for each side (l1i, l1d) and page size the input uses, by stack\n"
	  "distances (Mattson et al. 1970). The whole simulator runs (faults, THP, invalidations),\n"
	  "so page sizes are those a run of the config gets. Point E equals a run's\n"
	  "tlb.l1X.P.misses with tlb.l1X.P.entries=E, ways=E, tlb.policy=lru, tlb.stlb=[] (man page).\n"
	  "  --max-entries N  the largest array (default 4096)\n"
	  "  --sets S         S sets (set = page number mod S): every associativity 1..N/S at once\n"
	  "  -o OUT.csv       side,page_size,entries,misses,miss_ratio,lookups,sets,ways and the run.*\n"
	  "                   provenance texts (default: stdout)\n"
	  "  --plot OUT       the miss ratio against the entries (log x axis), drawn with gnuplot\n" },
	{ "demo",
	  "mmusim demo [--outdir DIR]\n"
	  "STREAM and GUPS under base pages, hugetlbfs and THP: the seed mail's table and DIR/demo.png.\n" },
	{ "help", "mmusim help [CMD]\nThe usage of every command, or of CMD (the same as CMD --help).\n" },
	{ "version", "mmusim version\nThe version and the build id (also mmusim --version).\n" },
};

const char *usage_help(const char *cmd)
{
	for (size_t i = 0; i < ARRAY_SIZE(help_texts); i++)
		if (!strcmp(cmd, help_texts[i].cmd))
			return help_texts[i].text;
	return NULL;
}
