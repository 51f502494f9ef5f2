#!/bin/bash
# doc_examples.sh - run every example of README.md and doc/mmusim.1, so that a
# documented command cannot rot. Run from the repository root by tests/run.sh
# (make check) with MMUSIM set to the binary under test. Prints one line per
# example ("ok", "skip" with its reason, or "FAIL" with the command's stderr)
# and a summary; exits 1 if an example failed or a table below is stale.
#
# The examples are extracted mechanically:
#   README.md: every fenced ``` block (indented or not), by its tag.
#     (none), sh, bash: shell. Each line is a command; a line ending in `\`, `|`,
#       `&&` or `||` goes on with the next; lines starting with # are comments.
#     yaml: a sweep file when it has a top-level `sweep:` key (checked with
#       `mmusim sweep FILE --list`), else a configuration (`mmusim config show
#       -c FILE`). A block whose first line is `# PATH` naming a file of the
#       repository must be that file, byte for byte, and PATH is what is checked.
#     text: a usage synopsis, not commands. Each line must show a placeholder (a
#       `[` or a word of two or more capitals, such as TRACE or OUT.csv), or the
#       test fails: a command cannot hide in a text block.
#     c: a whole program using the library (include/mmusim.h): compiled against the
#       build's libmmusim.a next to $MMUSIM (with the sanitizers when $MMUSIM has
#       them) and run; it passes when it exits 0.
#     Any other tag fails.
#   doc/mmusim.1: every .EX/.EE block (the EXAMPLES section's and the sweep file
#     example), with the roff escapes \- -> -, \e -> \ and \& -> nothing (any
#     other escape fails); a block whose first line is a YAML key (`config: ...`)
#     is YAML, else shell.
#
# Each block runs in a fresh directory $T/bN (two blocks at a time): a copy of
# configs/, links to the repository's tests/ and traces/, the FIXTURES below, and
# ./mmusim; `mmusim` is on PATH; both are $MMUSIM. A command runs there under `bash -o pipefail` and
# passes when it exits 0 and every output it names with -o, --json, --timeline
# or > (not "-") exists and is not empty. An example is run unless SKIP names
# it, so a new example that cannot run here fails until it is fixed or skipped
# with a reason.
MMUSIM=${MMUSIM:-./mmusim}
REPO=$(pwd)
case $MMUSIM in /*) ;; *) MMUSIM=$REPO/$MMUSIM ;; esac
[ -x "$MMUSIM" ] || { echo "FAIL: MMUSIM=$MMUSIM is not an executable"; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fails=0
nrun=0
nskip=0

# --- the tables ---------------------------------------------------------------------

# SHRINK: "FROM|TO", literal, applied to every command (and to nothing else) so the
# whole test stays well under a minute on two cores. Together with LOCAL below, this
# is the only change made to a documented command.
SHRINK=(
	'gups:size=256M,updates=4M|gups:size=4M,updates=64K' # 1 s, 3 modes: 0.1 s
	'gups:size=64M --modes|gups:size=4M --modes'         # 32M updates by default: 2M
	'xz -6 -c|xz -1 -c' # the preset sizes xz's dictionary, 8M -> 1M: 9 -> 5 CPU s under valgrind
)

# LOCAL: "FROM|TO", literal: a command written for other machines, run the same way
# on this one. GNU parallel over ssh to two hosts becomes GNU parallel here.
LOCAL=(
	'parallel --sshlogin 8/host1,8/host2 --workdir .|parallel -j 2'
)
# A command that uses $SLURM_ARRAY_TASK_ID is a Slurm array job: it runs here as the
# array's tasks one after another (the examples' `#SBATCH --array=0-3`), each with
# SLURM_CPUS_PER_TASK=1.
SLURM_TASKS="0 1 2 3"

# SKIP: "GLOB|REASON": commands that cannot run here, matched against the whole
# (joined) command.
SKIP=(
	'make check*|make check runs this script: it would recurse'
	'make demo*|a make target of the source tree: it builds ./mmusim there (a whole release build under make check-debug) before running mmusim demo'
)

# FIXTURES: "NAME|COMMAND": the files the examples name but the repository does not
# hold, made (in this order, in the directory every block starts from) from the
# repository's own files.
FIXTURES=(
	# the README's example sweep with one small input (one input: s.csv then has the
	# swept keys alone, which the examples plot as x and --by) and its config path
	# made relative to where it now lies
	's.yaml|sed -e "s|^config: \.\./|config: configs/|" -e "s|^workload:.*|workload: stream:size=1M,iterations=1|" configs/sweeps/example.yaml >s.yaml'
	# "a sweep's CSV": the one of s.yaml
	'results.csv|mmusim sweep s.yaml -o results.csv --quiet && rm -r results.csv.d'
	# configs/experiments/stream.yaml with its arrays of 128K to 1M only
	'stream.csv|sed "s/^  workload.size: .*/  workload.size: [128K, 256K, 512K, 1M]/" configs/experiments/stream.yaml >stream-small.yaml && mmusim sweep stream-small.yaml -o stream.csv --quiet && rm -r stream.csv.d stream-small.yaml'
	# a few KB of text for xz to compress
	"input.txt|head -c 4096 '$REPO/README.md' >input.txt"
	# the program to capture: any will do
	'prog|ln -s "$(type -P true)" prog'
)

# --- extraction ---------------------------------------------------------------------

mkdir -p "$T/ex" "$T/bin" || exit 1
ln -s "$MMUSIM" "$T/bin/mmusim"
export PATH="$T/bin:$PATH"

# Each block becomes $T/ex/NNN.KIND (KIND: sh, yaml, text, or bad) whose first
# line is where it starts (FILE:LINE); a bad block's second line says why.
awk -v out="$T/ex" '
function open_block(kind, where) { n++; f = sprintf("%s/%03d.%s", out, n, kind); print where > f }
FILENAME ~ /README.md$/ {
	if (!inb && /^ *```/) {
		tag = $0
		sub(/^ *```/, "", tag)
		kind = tag == "" || tag == "sh" || tag == "bash" ? "sh" : tag == "yaml" || tag == "text" || tag == "c" ? tag : "bad"
		open_block(kind, FILENAME ":" FNR + 1)
		if (kind == "bad") print "unknown fence tag \"" tag "\"" > f
		inb = 1
		next
	}
	if (inb && /^ *```/) { close(f); inb = 0; next }
	if (inb) print > f
	next
}
{
	if ($0 == ".EX") { exb = 1; first = 1; buf = ""; start = FNR + 1; next }
	if ($0 == ".EE") {
		kind = first_line ~ /^[A-Za-z_][A-Za-z0-9_.]*:( |$)/ ? "yaml" : "sh"
		if (bad != "") kind = "bad"
		open_block(kind, FILENAME ":" start)
		printf "%s", (bad != "" ? bad "\n" : buf) > f
		close(f)
		exb = 0; bad = ""; next
	}
	if (!exb) next
	line = $0
	gsub(/\\e/, "\001", line)
	gsub(/\\-/, "-", line)
	gsub(/\\&/, "", line)
	if (index(line, "\\")) bad = "unhandled roff escape in: " $0
	gsub(/\001/, "\\", line)
	if (first) { first_line = line; first = 0 }
	buf = buf line "\n"
}
' README.md doc/mmusim.1 || exit 1

# --- running ------------------------------------------------------------------------

fail() {
	fails=$((fails + 1))
	echo "FAIL  $*"
}

# The outputs a command names: after -o, --json, --timeline, or >.
outputs() {
	grep -oE -- '(^|[[:space:]])(-o|--json|--timeline)[[:space:]]+[^[:space:]|;&<>]+' <<<"$1" | awk '{ print $NF }'
	grep -oE -- '(^|[^0-9&>])>[[:space:]]*[^[:space:]|;&<>]+' <<<"$1" | sed 's/.*>[[:space:]]*//'
}

# The directory every block starts from.
B="$T/base"
mkdir -p "$B" && cp -r configs "$B/" && ln -s "$REPO/tests" "$B/tests" && ln -s "$REPO/traces" "$B/traces" &&
	ln -s "$MMUSIM" "$B/mmusim" || exit 1
for fx in "${FIXTURES[@]}"; do
	(cd "$B" && bash -o pipefail -c "${fx#*|}") >"$T/fx.err" 2>&1 ||
		{ fail "fixture ${fx%%|*}: ${fx#*|}"; sed 's/^/      /' "$T/fx.err"; }
done

# run_cmd WHERE DIR CMD: one shell command of a block
run_cmd() {
	local where=$1 dir=$2 cmd=$3 run e t0 t1 f missing=""

	for e in "${SKIP[@]}"; do
		# shellcheck disable=SC2053
		if [[ $cmd == ${e%%|*} ]]; then
			nskip=$((nskip + 1))
			used="$used${e%%|*} "
			echo "skip  $where: $cmd"
			echo "      (${e#*|})"
			return
		fi
	done
	for fx in "${FIXTURES[@]}"; do
		[[ " $cmd " == *[[:space:]/]"${fx%%|*}"[[:space:]]* ]] && used="$used${fx%%|*} "
	done
	run=$cmd
	for e in "${SHRINK[@]}" "${LOCAL[@]}"; do
		[[ $run == *"${e%%|*}"* ]] && used="$used${e%%|*} "
		run=${run//"${e%%|*}"/"${e#*|}"}
	done
	if [[ $run == *'$SLURM_ARRAY_TASK_ID'* ]]; then
		used="${used}SLURM "
		run="for SLURM_ARRAY_TASK_ID in $SLURM_TASKS; do export SLURM_ARRAY_TASK_ID SLURM_CPUS_PER_TASK=1; $run || exit; done"
	fi
	nrun=$((nrun + 1))
	t0=$(date +%s.%N)
	(cd "$dir" && timeout 120 bash -o pipefail -c "$run") >"$R.out" 2>"$R.err"
	local rc=$?
	t1=$(date +%s.%N)
	if [ $rc -eq 0 ]; then
		while IFS= read -r f; do
			[ "$f" = - ] || [ -s "$dir/$f" ] || missing="$missing $f"
		done < <(outputs "$run")
	fi
	if [ $rc -ne 0 ] || [ -n "$missing" ]; then
		fail "$where: $cmd"
		[ "$run" != "$cmd" ] && echo "      (run as: $run)"
		[ $rc -ne 0 ] && echo "      exit $rc; stderr:" || echo "      exit 0, but no output or an empty one:$missing; stderr:"
		tail -20 "$R.err" | sed 's/^/      | /'
		return
	fi
	printf 'ok    %s: %s (%s s)\n' "$where" "$cmd" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
	[ "$run" != "$cmd" ] && echo "      (run as: $run)"
	return 0
}

# run_yaml WHERE DIR FILE: a YAML block
run_yaml() {
	local where=$1 dir=$2 file=$3 first path target
	first=$(head -1 "$file")
	path=${first#\# }
	if [ "$first" != "$path" ] && [ -f "$REPO/$path" ]; then
		cmp -s "$file" "$REPO/$path" || { fail "$where: differs from $path:"; diff "$REPO/$path" "$file" | sed 's/^/      /'; return; }
		target=$path
	else
		mkdir -p "$dir/configs/sweeps"
		target=configs/sweeps/doc-example.yaml # where the shipped sweeps are: ../ paths resolve
		cp "$file" "$dir/$target"
	fi
	nrun=$((nrun + 1))
	if grep -q '^sweep:' "$file"; then
		if (cd "$dir" && mmusim sweep "$target" --list --outdir res) >"$R.out" 2>"$R.err" &&
			[ -s "$R.out" ] && ! grep -qv '^mmusim run ' "$R.out"; then
			echo "ok    $where: a sweep file of $(wc -l <"$R.out") points (mmusim sweep $target --list)"
		else
			fail "$where: mmusim sweep $target --list"
			sed 's/^/      | /' "$R.err"
		fi
	elif (cd "$dir" && mmusim config show -c "$target") >"$R.out" 2>"$R.err"; then
		echo "ok    $where: a configuration (mmusim config show -c $target)"
	else
		fail "$where: mmusim config show -c $target"
		sed 's/^/      | /' "$R.err"
	fi
}

# run_block N FILE: block N, extracted into FILE, in its own directory; its report
# goes to $T/rN.log, its counts to $T/rN.stat and the table entries it used to
# $T/rN.used. Blocks run in parallel (DOC_EXAMPLES_JOBS, default 2): a capture
# under valgrind takes seconds, and it is single-threaded.
run_block() {
	local kind where dir line cur n lineno at f0
	R="$T/r$1"
	nrun=0 nskip=0 fails=0 used=" "
	kind=${2##*.}
	where=$(head -1 "$2")
	tail -n +2 "$2" >"$R.body"
	dir="$T/b$1"
	cp -a "$B" "$dir" || { fail "$where: cannot copy $B"; return; }
	case $kind in
	bad)
		fail "$where: $(head -1 "$R.body")"
		;;
	yaml)
		run_yaml "$where" "$dir" "$R.body"
		;;
	c)
		cp "$R.body" "$dir/example.c"
		san="" # a sanitized build's library needs the sanitizers' runtime (make check-debug)
		grep -q __asan_init "$MMUSIM" && san="-fsanitize=address,undefined"
		if (cd "$dir" && cc -std=c11 -D_GNU_SOURCE $san -I"$REPO/include" -o example example.c \
			"$(dirname "$MMUSIM")/libmmusim.a" \
			$(pkg-config --libs gsl yaml-0.1 zlib liblzma libzstd jansson libxxhash) \
			-lpthread -lm && ./example) >"$R.out" 2>"$R.err"; then
			echo "ok    $where: a C program, built against the library and run"
			nrun=$((nrun + 1))
		else
			fail "$where: the C example does not build or run"
			sed 's/^/      | /' "$R.err"
		fi
		;;
	text)
		f0=$fails
		while IFS= read -r line; do
			[[ -z ${line// /} || $line == \#* ]] && continue
			[[ $line == *'['* || $line =~ [A-Z][A-Z] ]] ||
				fail "$where: a line of a text (synopsis) block without a placeholder: $line"
		done <"$R.body"
		[ "$fails" -eq "$f0" ] && echo "ok    $where: a usage synopsis (not run)"
		;;
	sh)
		cur=""
		n=1
		lineno=${where##*:}
		while IFS= read -r line || [ -n "$line" ]; do
			line=${line%"${line##*[![:space:]]}"} # trailing blanks
			if [ -z "$cur" ]; then
				at=$((lineno + n - 1))
				[[ -z $line || $line =~ ^[[:space:]]*# ]] && { n=$((n + 1)); continue; }
				cur=$line
			else
				cur="$cur ${line#"${line%%[![:space:]]*}"}"
			fi
			n=$((n + 1))
			case $cur in
			*\\) cur=${cur%\\}; cur=${cur%"${cur##*[![:space:]]}"}; continue ;;
			*'|' | *'&&' | *'||') continue ;;
			esac
			run_cmd "${where%:*}:$at" "$dir" "$cur"
			cur=""
		done <"$R.body"
		[ -n "$cur" ] && fail "$where: a command continues past the end of its block: $cur"
		;;
	esac
	rm -rf "$dir"
	echo "$nrun $nskip $fails" >"$R.stat"
	echo "$used" >"$R.used"
}

start=$(date +%s.%N)
nblock=0
for blk in "$T"/ex/*; do
	nblock=$((nblock + 1))
	while [ "$(jobs -rp | wc -l)" -ge "${DOC_EXAMPLES_JOBS:-2}" ]; do wait -n; done
	run_block "$nblock" "$blk" >"$T/r$nblock.log" 2>&1 &
done
wait
used=" "
for i in $(seq 1 "$nblock"); do
	cat "$T/r$i.log"
	if read -r a b c <"$T/r$i.stat"; then
		nrun=$((nrun + a)) nskip=$((nskip + b)) fails=$((fails + c))
	else
		fail "block $i did not finish"
	fi
	used="$used$(cat "$T/r$i.used" 2>/dev/null)"
done

# Every table entry must still be used by some example.
for e in "${SKIP[@]}" "${SHRINK[@]}" "${LOCAL[@]}" "${FIXTURES[@]}"; do
	[[ $used == *" ${e%%|*} "* ]] || fail "stale table entry, used by no example: ${e%%|*}"
done
[[ $used == *" SLURM "* ]] || fail "stale: no example is a Slurm array job (SLURM_TASKS)"

printf 'doc examples: %d run, %d skipped, %d failed (%d blocks, %s s)\n' "$nrun" "$nskip" "$fails" \
	"$nblock" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')"
[ "$fails" -eq 0 ]
