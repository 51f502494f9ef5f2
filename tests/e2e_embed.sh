#!/bin/sh
# The library as an embedding program sees it: examples/embed.c, built by
# `make check` against this build's libmmusim.a, and built again from an
# installed layout (`make install PREFIX=...`, pkg-config), prints the counts
# `mmusim run` reports for the validation trace.
MMUSIM=${MMUSIM:-build/release/mmusim}
BUILD=${BUILD:-build/release}
EMBED=${EMBED:-$BUILD/examples/embed}
TRACE=tests/validation/small.lackey.zst
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

$MMUSIM run "$TRACE" --json "$T/cli.json" --quiet || bad "mmusim run $TRACE failed"
j="$T/cli.json"
refs=$(($(field "$j" refs ifetch) + $(field "$j" refs load) + $(field "$j" refs store) + $(field "$j" refs modify)))
printf 'refs %s\nl1i_misses %s\nl1d_misses %s\nstlb_misses %s\nwalks %s\npgfault %s\n' "$refs" \
	"$(field "$j" l1i misses)" "$(field "$j" l1d misses)" "$(field "$j" stlb misses)" \
	"$(field "$j" walk walks)" "$(field "$j" vmstat pgfault)" >"$T/want"
"$EMBED" "$TRACE" >"$T/got" 2>&1 && cmp -s "$T/got" "$T/want" && ok ||
	bad "examples/embed: $(tr '\n' ' ' <"$T/got") against the CLI's $(tr '\n' ' ' <"$T/want")"
# an override reaches the machine as --set does
$MMUSIM run "$TRACE" --set tlb.stlb.entries=64 --json "$T/small.json" --quiet
"$EMBED" "$TRACE" tlb.stlb.entries=64 | grep -qx "stlb_misses $(field "$T/small.json" stlb misses)" && ok ||
	bad "examples/embed with tlb.stlb.entries=64 differs from run --set"
"$EMBED" "$T/missing" 2>"$T/err" && bad "embed on a missing trace exited 0" ||
	{ grep -q "missing: No such file or directory" "$T/err" && ok || bad "embed's error: $(cat "$T/err")"; }

# the library is the simulator, not the command line's tools: no help texts, demo, sweep
# scheduler or gnuplot figures (nor main.c, cli*.c, the capture launcher) in the archive
tools=$(nm -g --defined-only "$BUILD/libmmusim.a" |
	awk 'NF == 3 && $3 ~ /^(usage|demo|sweep|plot|capture|cli|main)(_|$)/ { print $3 }' | sort -u)
[ -z "$tools" ] && ok || bad "libmmusim.a defines the tools' $(echo $tools | head -c 200)"

# the installed layout (not with an ASan build: its archive needs the sanitizer's flags)
if ! grep -q __asan_init "$MMUSIM"; then
	if ${MAKE:-make} -s --no-print-directory install PREFIX="$T/pfx" BUILD="$BUILD" >"$T/install.log" 2>&1; then
		ok
		PKG_CONFIG_PATH="$T/pfx/lib/pkgconfig"
		export PKG_CONFIG_PATH
		for f in include/mmusim.h lib/libmmusim.a lib/pkgconfig/mmusim.pc; do
			[ -f "$T/pfx/$f" ] && ok || bad "make install: no $f"
		done
		cc examples/embed.c $(pkg-config --cflags --libs mmusim) -o "$T/embed" 2>"$T/cc.log" &&
			"$T/embed" "$TRACE" >"$T/got2" && cmp -s "$T/got2" "$T/want" && ok ||
			bad "embed from the installed layout: $(cat "$T/cc.log" "$T/got2" | head -5)"
		# the machine files where the .pc says they are
		dd=$(pkg-config --variable=datadir mmusim)
		check "$dd" "$T/pfx/share/mmusim" "mmusim.pc's datadir"
		[ -f "$dd/configs/skylake.yaml" ] && ok || bad "no configs/skylake.yaml under the .pc's datadir"
		cc examples/embed.c $(pkg-config --static --cflags --libs mmusim) -o "$T/embed-static" \
			2>"$T/cc.log" && ok || bad "pkg-config --static: $(head -5 "$T/cc.log")"
		# the archive's only global symbols are the API's: a program's own names do not clash
		other=$(nm -g --defined-only "$T/pfx/lib/libmmusim.a" | awk 'NF == 3 && $3 !~ /^mmusim_/ { print $3 }')
		[ -z "$other" ] && ok || bad "libmmusim.a exports $(echo $other | head -c 200)"
		# (nor does it hold them as local symbols)
		tools=$(nm "$T/pfx/lib/libmmusim.a" | awk 'NF == 3 && $3 ~ /^(usage|demo|sweep|plot)_/ { print $3 }')
		[ -z "$tools" ] && ok || bad "the installed libmmusim.a holds $(echo $tools | head -c 200)"
		printf '#include <mmusim.h>\nint sim_init(void);\nint sim_init(void) { return 0; }\nint err_set(void);\nint err_set(void) { return 0; }\nint main(void) { struct mmusim *m; int rc = mmusim_create(&m, 0); mmusim_destroy(m); return rc + sim_init() + err_set(); }\n' >"$T/clash.c"
		cc "$T/clash.c" $(pkg-config --cflags --libs mmusim) -o "$T/clash" 2>"$T/cc.log" && "$T/clash" && ok ||
			bad "a program with its own sim_init and err_set: $(head -5 "$T/cc.log")"
		# C++ sees the header through its extern "C" guards
		if command -v c++ >/dev/null 2>&1; then
			printf '#include <mmusim.h>\nint main() { mmusim *m; int rc = mmusim_create(&m, nullptr); mmusim_destroy(m); return rc; }\n' >"$T/x.cc"
			c++ "$T/x.cc" $(pkg-config --cflags --libs mmusim) -o "$T/xx" 2>"$T/cxx.log" && "$T/xx" && ok ||
				bad "C++: $(head -5 "$T/cxx.log")"
		fi
	else
		bad "make install PREFIX=$T/pfx: $(tail -5 "$T/install.log")"
	fi
fi

echo "  e2e_embed: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
