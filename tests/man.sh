#!/bin/sh
# man.sh - check that doc/mmusim.1 documents every configuration key and every
# command of the binary $MMUSIM (default ./mmusim):
#   - every leaf key printed by `mmusim config show`, flattened to its dotted path
#     (tlb.l1d.4K.entries, os.khugepaged.max_ptes_none; the STLB list items as
#     tlb.stlb.N.entries), appears in the page as a whole word;
#   - every key named in a tag of the CONFIGURATION section is a real key (no stale
#     documentation);
#   - every CONFIGURATION entry of a key that mirrors a kernel file (it names a
#     /sys/ or /proc/ path) names a Linux version and a function;
#   - every command named in the usage text (`mmusim help`: run, config show,
#     trace info, ...) has a .SS heading of that name;
#   - every counter the report names after the kernel (vmstat.*, host.vmstat.*,
#     mthp.SIZE.*, taken from JSON reports of the binary) has an entry in the KERNEL
#     COUNTERS section naming a Linux version and a function;
#   - groff -man -ww reports no warnings (skipped when groff is not installed).
# Prints one `ok: ...` or `FAIL: ...` line per check; exits 1 if any failed.
# MMUSIM_MAN overrides the page's path.

MMUSIM=${MMUSIM:-./mmusim}
here=$(cd "$(dirname "$0")" && pwd)
DOC=${MMUSIM_MAN:-$here/../doc/mmusim.1}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

die() {
	echo "FAIL: $*"
	exit 1
}

[ -x "$MMUSIM" ] || die "MMUSIM=$MMUSIM is not an executable"
[ -r "$DOC" ] || die "$DOC: cannot read"

# The page without font and zero-width escapes, so words can be matched whole.
sed 's/\\f[BIRP]//g; s/\\f(..//g; s/\\[%&]//g' "$DOC" >"$tmp/page" || exit 1

# --- configuration keys ----------------------------------------------------

# (virt.mode other than none adds the virt.* and host.os.* keys, cpu.model overlap the
# timed memory's cache.dram_bandwidth and cache.prefetch.*, a 1G default huge page size
# os.hugetlbfs.default_size, cpu.pcid true the quiet cpu.pcid, a folio size the quiet
# os.file_cache_folio_size, tlb.coalesce.* its quiet keys, and os.thp.shrink_underused false,
# written only when off)
"$MMUSIM" config show --set virt.mode=nested --set cpu.model=overlap --set os.hugetlbfs.default_size=1G --set cpu.pcid=true \
	--set os.file_cache_folio_size=64K \
	--set tlb.coalesce.kind=amd --set tlb.coalesce.l1i=true --set tlb.coalesce.l1d=true --set tlb.coalesce.stlb=true \
	--set os.thp.shrink_underused=false \
	>"$tmp/config.yaml" || die "$MMUSIM config show failed"

# Flatten the YAML that config_write_yaml() writes: block mappings indented by two
# spaces, flow mappings { k: v, k: { ... } }, a block sequence of flow mappings
# (tlb.stlb), flow sequences [4K, 2M] and double-quoted strings as values.
awk '
function emit(path) { print path }
function skip_blanks() { while (pos <= len && substr(s, pos, 1) == " ") pos++ }
# A value at pos: a flow mapping (recursed into), a flow sequence, a quoted string
# or a plain scalar. Leaves are emitted as @path.
function value(path,    c, depth) {
	skip_blanks()
	c = substr(s, pos, 1)
	if (c == "{") {
		pos++
		mapping(path)
		return
	}
	if (c == "[") {
		depth = 0
		for (; pos <= len; pos++) {
			c = substr(s, pos, 1)
			if (c == "[") depth++
			else if (c == "]" && --depth == 0) { pos++; break }
		}
	} else if (c == "\"") {
		for (pos++; pos <= len; pos++) {
			c = substr(s, pos, 1)
			if (c == "\\") pos++
			else if (c == "\"") { pos++; break }
		}
	} else {
		while (pos <= len && substr(s, pos, 1) !~ /[,}]/) pos++
	}
	emit(path)
}
# Entries of a flow mapping, pos just after its "{", up to and past its "}".
function mapping(path,    key, c) {
	for (;;) {
		skip_blanks()
		c = substr(s, pos, 1)
		if (pos > len) { bad = 1; return }
		if (c == "}") { pos++; return }
		if (c == ",") { pos++; continue }
		key = ""
		while (pos <= len && substr(s, pos, 1) != ":") key = key substr(s, pos++, 1)
		pos++
		value(path "." key)
	}
}
/^[ ]*(#|$)/ { next }
{
	line = $0
	match(line, /^ */)
	level = RLENGTH / 2
	rest = substr(line, RLENGTH + 1)
	prefix = ""
	for (i = 0; i < level; i++)
		prefix = prefix (i ? "." : "") stack[i]
	if (rest ~ /^- /) {
		# an item of a block sequence: its index is written N
		s = substr(rest, 3); pos = 1; len = length(s)
		value(prefix ".N")
		next
	}
	key = rest
	sub(/:.*/, "", key)
	stack[level] = key
	path = prefix (level ? "." : "") key
	s = rest
	sub(/^[^:]*:[ ]?/, "", s)
	pos = 1; len = length(s)
	if (len == 0)
		next            # an interior block mapping: its keys follow
	value(path)
}
END { exit bad }
' "$tmp/config.yaml" >"$tmp/keys" || die "cannot flatten the output of $MMUSIM config show"

nkeys=$(wc -l <"$tmp/keys")
[ "$nkeys" -gt 0 ] || die "no keys in the output of $MMUSIM config show"
missing=0
while read -r key; do
	re=$(printf '%s' "$key" | sed 's/\./\\./g')
	if ! grep -Eq "(^|[^A-Za-z0-9_.])$re([^A-Za-z0-9_]|\$)" "$tmp/page"; then
		echo "FAIL: config key $key is not in $DOC"
		missing=$((missing + 1))
	fi
done <"$tmp/keys"
if [ "$missing" -eq 0 ]; then
	echo "ok: all $nkeys config keys of '$MMUSIM config show' are documented"
else
	fail=1
fi

# Keys named in the tags (.TP/.TQ lines) of CONFIGURATION must exist.
awk '
/^\.SH/ { inconf = ($0 ~ /^\.SH "?CONFIGURATION/) }
inconf && tag { print; tag = 0; next }
inconf && /^\.(TP|TQ)/ { tag = 1 }
' "$tmp/page" | tr ' ",;()' '\n\n\n\n\n\n' |
	grep -E '^(cpu|tlb|walk|cache|os)\.[A-Za-z0-9_.]*[A-Za-z0-9_]$|^seed$' |
	sort -u >"$tmp/tagged"
stale=0
while read -r key; do
	case $key in
	tlb.stlb.[0-9]) continue ;; # tlb.stlb.0 .. tlb.stlb.3: the array, not a leaf
	esac
	if ! grep -qxF "$key" "$tmp/keys"; then
		echo "FAIL: $DOC documents $key, which '$MMUSIM config show' does not print"
		stale=$((stale + 1))
	fi
done <"$tmp/tagged"
if [ "$stale" -eq 0 ]; then
	echo "ok: the $(wc -l <"$tmp/tagged") keys in CONFIGURATION tags all exist"
else
	fail=1
fi

# A key that mirrors a kernel file (its CONFIGURATION entry names a /sys/ or /proc/
# path: os.thp.*, os.khugepaged.*, os.read_ahead_kb, ...) names the Linux version
# and a function it follows, in its entry (tags and text up to the next .TP, .PP,
# .SS or .SH; keys sharing .TQ tags share the entry).
awk '
function flush() { if (names != "") print names "\t" text; names = ""; text = "" }
/^\.SH/ { flush(); insec = ($0 ~ /^\.SH "?CONFIGURATION/); next }
!insec { next }
/^\.(PP|SS|LP|P)([ ]|$)/ { flush(); tag = 0; next }
/^\.TP/ { flush(); tag = 1; next }
/^\.TQ/ { tag = 1; next }
tag {
	n = split($0, w, /[ ",;()]+/)
	for (i = 1; i <= n; i++)
		if (w[i] ~ /^(cpu|tlb|walk|cache|os|virt|host|sched)\.[A-Za-z0-9_.]*$/) names = names " " w[i]
	text = text " " $0
	tag = 0
	next
}
names != "" { text = text " " $0 }
END { flush() }
' "$tmp/page" | awk -F'\t' '$2 ~ /\/(sys|proc)\//' >"$tmp/knobs"
# version_and_function WHAT BODY: a FAIL line on stderr for each of a Linux
# version (N.N) and a function (name()) BODY does not name; how many on stdout.
version_and_function() {
	n=0
	if ! printf '%s\n' "$2" | grep -Eq '(^|[^0-9.])[2-9]\.[0-9]+'; then
		echo "FAIL: $1 names no Linux version (N.N)" >&2
		n=$((n + 1))
	fi
	if ! printf '%s\n' "$2" | grep -Eq '[A-Za-z_][A-Za-z0-9_]*\(\)'; then
		echo "FAIL: $1 names no function (name())" >&2
		n=$((n + 1))
	fi
	echo "$n"
}
nknobs=$(wc -l <"$tmp/knobs")
[ "$nknobs" -gt 0 ] || die "no CONFIGURATION entry names a /sys/ or /proc/ file"
bad=0
while IFS="$(printf '\t')" read -r names body; do
	bad=$((bad + $(version_and_function "the CONFIGURATION entry of$names mirrors a kernel file but" "$body")))
done <"$tmp/knobs"
if [ "$bad" -eq 0 ]; then
	echo "ok: the $nknobs CONFIGURATION entries of kernel files each name a Linux version and a function"
else
	fail=1
fi

# --- commands ----------------------------------------------------------------

"$MMUSIM" help >"$tmp/usage" || die "$MMUSIM help failed"
# After each "mmusim": the lower-case words that name the command (stop at an
# option, a metavariable or a bracket).
awk '{
	for (i = 1; i <= NF; i++) {
		if ($i != "mmusim")
			continue
		cmd = ""
		for (j = i + 1; j <= NF && $j ~ /^[a-z]+$/; j++)
			cmd = cmd (cmd == "" ? "" : " ") $j
		if (cmd != "")
			print cmd
	}
}' "$tmp/usage" | sort -u >"$tmp/commands"
sed -n 's/^\.SS[ ]*//p' "$tmp/page" | sed 's/^"\(.*\)"[ ]*$/\1/' >"$tmp/headings"

ncmd=$(wc -l <"$tmp/commands")
[ "$ncmd" -gt 0 ] || die "no commands found in the output of $MMUSIM help"
missing=0
while read -r cmd; do
	if ! grep -qxF "$cmd" "$tmp/headings"; then
		echo "FAIL: command '$cmd' of the usage text has no .SS heading in $DOC"
		missing=$((missing + 1))
	fi
done <"$tmp/commands"
if [ "$missing" -eq 0 ]; then
	echo "ok: all $ncmd commands of the usage text have a .SS heading ($(tr '\n' ',' <"$tmp/commands" | sed 's/,$//; s/,/, /g'))"
else
	fail=1
fi

# --- kernel counters -----------------------------------------------------------

# Every counter the report names after the kernel (the JSON's vmstat.* and
# host.vmstat.* leaves, the mthp object's per-size names) has a tag of its own in the
# KERNEL COUNTERS section, and its entry (tag and body, up to the next .TP, .PP, .SS
# or .SH) names a Linux version (N.N) and a function (name()). The names come from
# the binary, never from a list kept here: one run with 64K mTHP (vmstat.*,
# mthp.64K.*), one of two processes in a nested virtual machine (the counters
# shown only with several processes, host.vmstat.*) and one whose THPs the
# shrinker splits as underused (a counter shown only when not 0) print every one.
cat >"$tmp/t.lackey" <<'TRACE'
SYSCALL[7,1](9) sys_mmap ( 0x0, 4194304, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)
 S 40000010,8
 S 40001000,8
 S 40010000,8
 L 40020000,8
 S 40020000,8
SYSCALL[7,1](11) sys_munmap ( 0x40010000, 8192 )[sync] --> Success(0x0)
TRACE
"$MMUSIM" run "$tmp/t.lackey" --set os.mode=thp --set os.thp.enabled=never \
	--set os.thp.sizes.64K.enabled=always --json "$tmp/mthp.json" --quiet ||
	die "$MMUSIM run (64K mTHP) failed"
"$MMUSIM" run "$tmp/t.lackey" "$tmp/t.lackey" --set virt.mode=nested --json "$tmp/virt.json" --quiet ||
	die "$MMUSIM run (two processes, virt.mode nested) failed"
# counters shown only when not 0 (thp_underused_split_page): 48 THPs of one written page
# each on a 64M machine under max_ptes_none 409, split as underused when kswapd runs
{
	echo "SYSCALL[7,1](9) sys_mmap ( 0x0, 100663296, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x40000000)"
	for i in $(seq 0 47); do printf ' S %x,8\n' $((0x40000010 + i * 2097152)); done
} >"$tmp/u.lackey"
"$MMUSIM" run "$tmp/u.lackey" --set os.mode=thp --set os.memory=64M --set os.khugepaged.max_ptes_none=409 \
	--json "$tmp/underused.json" --quiet || die "$MMUSIM run (underused THPs) failed"
# Leaves of stats_write_json()'s JSON (two spaces a level, one member a line) as
# dotted paths; arrays (vmas, processes) are skipped whole.
awk '
{
	match($0, /^ */)
	level = RLENGTH / 2
	rest = substr($0, RLENGTH + 1)
	if (skip) {
		if (level == skip_level && rest ~ /^\]/) skip = 0
		next
	}
	if (rest !~ /^"/) next
	key = rest
	sub(/^"/, "", key)
	sub(/".*/, "", key)
	stack[level] = key
	path = ""
	for (i = 1; i <= level; i++) path = path (i > 1 ? "." : "") stack[i]
	if (rest ~ /: \{$/) next
	if (rest ~ /: \[$/) { skip = 1; skip_level = level; next }
	print path
}' "$tmp/mthp.json" "$tmp/virt.json" "$tmp/underused.json" |
	sed -n 's/^\(host\.\)\{0,1\}vmstat\.\([a-z0-9_]*\)$/\2/p; s/^mthp\.[0-9]*[KM]\.\([a-z0-9_]*\)$/\1/p' |
	sort -u >"$tmp/counters"
grep -qx 'anon_fault_alloc' "$tmp/counters" && grep -qx 'thp_scan_exceed_share_pte' "$tmp/counters" &&
	grep -qx 'shadow_pages' "$tmp/counters" && grep -qx 'thp_underused_split_page' "$tmp/counters" ||
	die "the runs did not print the mthp, several-process, host and underused counters (is the JSON's layout new?)"

# The entries of KERNEL COUNTERS: per entry, its tag names, then a tab, then its
# text on one line.
awk '
function flush() { if (names != "") print names "\t" text; names = ""; text = "" }
/^\.SH/ { flush(); insec = ($0 ~ /^\.SH "?KERNEL COUNTERS/); next }
!insec { next }
/^\.(TP|PP|SS|LP|P)([ ]|$)/ { flush(); tag = ($0 ~ /^\.TP/); next }
/^\.TQ/ { tag = 1; next }
tag {
	line = $0
	sub(/^\.[A-Z]+[ ]*/, "", line)
	n = split(line, w, /[ ",()]+/)
	for (i = 1; i <= n; i++)
		if (w[i] ~ /^[a-z][a-z0-9_]*$/) { names = names " " w[i]; break }
	text = text " " $0
	tag = 0
	next
}
names != "" { text = text " " $0 }
END { flush() }
' "$tmp/page" >"$tmp/entries"

ncounters=$(wc -l <"$tmp/counters")
missing=0
while read -r name; do
	body=$(awk -F'\t' -v n="$name" '{ k = split($1, t, " "); for (i = 1; i <= k; i++) if (t[i] == n) { print $2; exit } }' "$tmp/entries")
	if [ -z "$body" ]; then
		echo "FAIL: counter $name (reported by $MMUSIM) has no entry in KERNEL COUNTERS of $DOC"
		missing=$((missing + 1))
		continue
	fi
	missing=$((missing + $(version_and_function "the KERNEL COUNTERS entry of $name" "$body")))
done <"$tmp/counters"
if [ "$missing" -eq 0 ]; then
	echo "ok: all $ncounters kernel counters the binary reports have a KERNEL COUNTERS entry with a version and a function"
else
	fail=1
fi

# --- formatting ----------------------------------------------------------------

# no control character but the newline (a '\f' escape typed as a form feed byte
# once hid in .IB OUT .reps.csv and groff did not warn)
if LC_ALL=C grep -n '[[:cntrl:]]' "$DOC" | grep -v "$(printf '\t')" >"$tmp/cntrl" || [ -s "$tmp/cntrl" ]; then
	if [ -s "$tmp/cntrl" ]; then
		echo "FAIL: control characters in $DOC:"
		sed 's/^/  /' "$tmp/cntrl" | cat -v
		fail=1
	fi
fi

if command -v groff >/dev/null 2>&1; then
	if groff -man -Tutf8 -ww -z "$DOC" >"$tmp/groff" 2>&1 && [ ! -s "$tmp/groff" ]; then
		echo "ok: groff -man -ww: no warnings"
	else
		echo "FAIL: groff -man -ww -z $DOC:"
		sed 's/^/  /' "$tmp/groff"
		fail=1
	fi
else
	echo "ok: groff not installed, formatting not checked"
fi

exit $fail
