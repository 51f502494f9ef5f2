#!/bin/bash
# synopsis.sh - one synopsis per command: the options that README.md's usage
# block, the man page's SYNOPSIS, `mmusim help` and `mmusim help CMD` list for
# each command are the same set, and the command accepts every one of them
# (its parser does not call it an unknown option).
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

CMDS="run|config show|config host|trace info|trace convert|trace gen|capture|sweep|merge|plot|mrc|demo|help|version"

# stdin: synopsis lines "mmusim CMD ..." with continuation lines indented;
# stdout: "CMD<TAB>option" lines, sorted and unique
opts() {
	awk -v cmds="$CMDS" '
	BEGIN { n = split(cmds, c, "|") }
	{ sub(/#.*/, "") }
	/^ *(usage: )?mmusim / || /^       mmusim / {
		line = $0; sub(/^ *(usage: )?mmusim /, "", line); cur = ""
		for (i = 1; i <= n; i++) if (index(line, c[i]) == 1 && length(c[i]) > length(cur)) cur = c[i]
		line = substr(line, length(cur) + 1)
	}
	!/^ *(usage: )?mmusim / { line = $0 }
	cur != "" {
		gsub(/\(or [^)]*\)/, "", line)
		while (match(line, /(^|[^a-zA-Z0-9.-])--?[a-zA-Z][a-zA-Z0-9-]*/)) {
			o = substr(line, RSTART, RLENGTH); sub(/^[^-]/, "", o)
			print cur "\t" o
			line = substr(line, RSTART + RLENGTH)
		}
	}' | sort -u
}

# README.md: the first ```text block after "## Usage"
awk '/^## Usage/ { u = 1 } u && /^```text/ { b = 1; next } b && /^```/ { exit } b' README.md | opts >"$T/readme"
# the man page: .SY mmusim ... .YS, as text
awk '/^\.SH SYNOPSIS/ { s = 1 } /^\.SH DESCRIPTION/ { exit } s' doc/mmusim.1 |
	awk '/^\.SY/ { if (l != "") print l; l = "" ; next } /^\.YS/ { print l; l = ""; next }
	     { gsub(/\\-/, "-"); gsub(/\\c/, ""); gsub(/\\&/, ""); gsub(/\\f[BIRP]/, "")
	       sub(/^\.(B|I|RB|BR|RI|IR|IB|BI) /, ""); gsub(/"/, ""); l = l " " $0 }' |
	sed 's/^ *mmusim/mmusim/; s/^ */mmusim /; s/^mmusim mmusim/mmusim/' | opts >"$T/man"
"$MMUSIM" help 2>&1 | awk '/^Options take/ { exit } 1' | opts >"$T/help"
: >"$T/helpcmd"
for c in run "config" trace capture sweep merge plot mrc demo; do
	"$MMUSIM" help $c 2>&1 | grep -E '^ *mmusim |^ {6,}\[' | opts >>"$T/helpcmd"
done
sort -u -o "$T/helpcmd" "$T/helpcmd"
grep -v -e '^help	' -e '^version	' "$T/help" >"$T/help2"

for src in man help2 helpcmd; do
	if cmp -s "$T/readme" "$T/$src"; then ok; else
		bad "README's synopsis and $src differ (< README, > $src):
$(diff "$T/readme" "$T/$src" | grep '^[<>]')"
	fi
done
check "$(wc -l <"$T/readme" | tr -d ' ')" "$(wc -l <"$T/readme" | tr -d ' ')" "options found"
[ "$(wc -l <"$T/readme")" -gt 40 ] && ok || bad "only $(wc -l <"$T/readme") options found in README's synopsis"

# every listed option is one the command knows
while IFS=$'\t' read -r cmd o; do
	case "$cmd" in help | version) continue ;; esac
	[ "$o" = --help ] && continue
	# shellcheck disable=SC2086
	timeout 20 "$MMUSIM" $cmd "$o" </dev/null >"$T/out" 2>"$T/err"
	if grep -qiE "unknown option|unrecognized option" "$T/err"; then
		bad "mmusim $cmd does not know $o: $(head -1 "$T/err")"
	else ok; fi
done <"$T/readme"

echo "  synopsis: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
