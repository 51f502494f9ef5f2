#!/bin/bash
# native_guest.sh - make native-guest's plumbing, without booting a guest (that
# takes minutes and qemu: `make native-guest`, README "Tests"): tests/native.sh's
# NATIVE_GUEST hook refuses an unknown state before any work, and hands a guest
# that cannot run (no qemu, no kernel) back as "SKIP: guest: why", exit 0, never
# as a native run of this machine; tests/native/guest.sh's own usage errors exit 2.
MMUSIM=${MMUSIM:-./mmusim}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
. tests/e2e_lib.sh

NATIVE_GUEST=bogus bash tests/native.sh >"$T/out" 2>"$T/err"
check "$?" 2 "NATIVE_GUEST=bogus: exit status"
check "$(cat "$T/err")" "NATIVE_GUEST: unknown state 'bogus' (fresh, huge-zero-allocated, use-zero-page-0)" \
	"NATIVE_GUEST=bogus: message"
check "$(cat "$T/out")" "" "NATIVE_GUEST=bogus: nothing ran"

# native.sh skips earlier, for itself, without valgrind or the capture tool: then
# the guest is never asked, and the SKIP names what is missing here
QEMU=/nonexistent/qemu NATIVE_GUEST=fresh MMUSIM=$MMUSIM bash tests/native.sh >"$T/out" 2>&1
check "$?" 0 "no qemu: exit status"
if grep -q '^SKIP: guest:' "$T/out" || ! grep -q '^SKIP:' "$T/out"; then
	check "$(cat "$T/out")" "SKIP: guest: no /nonexistent/qemu (apt-get install qemu-system-x86)" "no qemu: output"
fi
GUEST_KERNEL=/nonexistent/linux-image.deb NATIVE_GUEST=use-zero-page-0 MMUSIM=$MMUSIM \
	bash tests/native.sh >"$T/out" 2>&1
check "$?" 0 "no kernel: exit status"
if command -v qemu-system-x86_64 >/dev/null 2>&1 && command -v busybox >/dev/null 2>&1 &&
	{ grep -q '^SKIP: guest:' "$T/out" || ! grep -q '^SKIP:' "$T/out"; }; then
	check "$(cat "$T/out")" "SKIP: guest: no guest kernel: set GUEST_KERNEL to a Debian linux-image .deb (README, Tests)" \
		"no kernel: output"
fi

expect_error "usage: tests/native/guest.sh DIR STATE RUNS NAME:CASE:BIN..." bash tests/native/guest.sh "$T" fresh 3
expect_error "tests/native/guest.sh: unknown state 'warm'" bash tests/native/guest.sh "$T" warm 3 thp-read:thp-read:steps
# a state it knows, and no program to run: bad usage too, not a boot (unless it
# skipped first, for want of qemu, busybox-static or e2fsprogs)
GUEST_KERNEL=$T bash tests/native/guest.sh "$T" fresh 3 thp-read:thp-read:steps >"$T/out" 2>"$T/err"
rc=$?
if ! grep -q '^SKIP: ' "$T/out"; then
	check "$rc $(cat "$T/err")" "2 tests/native/guest.sh: no $T/steps" "no program: exit status and message"
fi

echo "  native_guest: $((n - fails)) of $n checks passed"
[ $fails -eq 0 ]
