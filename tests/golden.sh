#!/bin/sh
# Re-bless the golden reports: tests/golden/NAME.json is the report (both modes,
# wall-clock fields removed) of tests/golden/NAME.lackey on configs/nehalem.yaml.
# Only run this on purpose (make golden-update), after checking the change is right.
set -e
MMUSIM=${MMUSIM:-./mmusim}
[ "$1" = update ] || { echo "usage: $0 update" >&2; exit 2; }
for g in tests/golden/*.lackey; do
	$MMUSIM run -c configs/nehalem.yaml "$g" --modes base,hugetlbfs,thp --json - |
		grep -v -e '"wall_seconds"' -e '"refs_per_second"' -e '"max_rss_bytes"' -e '"build_id"' >"${g%.lackey}.json"
	echo "blessed ${g%.lackey}.json"
done
