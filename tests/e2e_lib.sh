# e2e_lib.sh - what the end-to-end scripts share (POSIX sh; sourced from the
# repository root after $T, a scratch directory, is set): check counting, the
# report's counters, and the bad-input contract. A script ends with
#   echo "  NAME: $((n - fails)) of $n checks passed"; [ $fails -eq 0 ]
fails=0
n=0

ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "    FAIL: $*"; }
check() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', expected '$2'"; fi; }

# the report minus what differs between identical runs (wall clock, peak RSS, build)
strip() { grep -v -e '"wall_seconds"' -e '"refs_per_second"' -e '"max_rss_bytes"' -e '"build_id"'; }
# one counter from a pretty-printed JSON report: first "key": N after a "section"
field() { awk -v sec="\"$2\":" -v key="\"$3\":" '$1 == sec { s = 1 } s && $1 == key { gsub(/,/, "", $2); print $2; exit }' "$1"; }

# expect_error EXPECTED_PREFIX CMD...: exit 2 and stderr starting with the prefix
expect_error() {
	want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -ne 2 ]; then bad "exit $rc (want 2): $*"; return; fi
	if ! head -1 "$T/err" | grep -qF -- "$want"; then
		bad "stderr of '$*' is '$(head -1 "$T/err")', want prefix '$want'"
		return
	fi
	ok
}
