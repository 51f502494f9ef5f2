#!/bin/bash
# guest.sh - the native side of tests/native.sh in a QEMU guest running a stock
# Debian kernel (NATIVE_GUEST=STATE bash tests/native.sh calls it).
#
#   tests/native/guest.sh DIR STATE RUNS NAME:CASE:BIN...
#
# DIR holds `steps`, the static program of tests/native/steps.c that native.sh
# built (and captures on this machine: the trace of a static program is the same
# program wherever it runs). The guest boots an initramfs (busybox-static, the
# kernel's virtio_blk and ext4 modules with their dependences, mmusim with its
# shared libraries, util-linux's setarch), mounts an ext4 disk image as its
# working directory -- the file cases see ext4 and a page cache written in the
# guest, as on a real machine, not a ramfs -- and there:
#
#   - writes `steps` (cp) and `steps4k` (dd bs=4096) into it and syncs them;
#   - puts the zero pages in STATE:
#       fresh                 as booted (Debian: use_zero_page 1, no huge zero
#                             page allocated yet)
#       huge-zero-allocated   thp-read run once first, so the huge zero page
#                             exists before the suite (thp_zero_page_alloc 1)
#       use-zero-page-0       transparent_hugepage/use_zero_page set to 0
#   - runs each case RUNS times (under setarch -R), with `mmusim config host`
#     (the guest's THP settings, zero pages and kernel release for the replay)
#     before the first run and after the last;
#   - runs thp-read once more with use_zero_page flipped, as native.sh does as
#     root, under the name thp-read-use_zero_page=V.
#
# The results come back from the disk image (debugfs rdump) into DIR/guest/:
# uname (the guest's `uname -r`), host.yaml (config host before the suite),
# setarch (present when setarch -R works), NAME.nR (each run's output),
# NAME.host0.yaml and NAME.host.yaml (config host before the first run and after
# the last), NAME.err, console.log, and `done` when the guest finished.
#
# The kernel: GUEST_KERNEL, a linux-image .deb (Debian's pool) or the directory
# one was extracted into (dpkg-deb -x); by default the newest
# ${XDG_CACHE_HOME:-~/.cache}/mmusim/guest/linux-image-*.deb. QEMU runs TCG
# (no /dev/kvm needed), one CPU, GUEST_MEM MiB (2048), for at most
# GUEST_TIMEOUT seconds (1200). Prints "SKIP: why" and exits 0 without
# DIR/guest/done when qemu, busybox-static, e2fsprogs or the kernel is missing;
# exits 1 when the guest fails.
set -u
[ $# -ge 4 ] || { echo "usage: $0 DIR STATE RUNS NAME:CASE:BIN..." >&2; exit 2; }
DIR=$1 STATE=$2 RUNS=$3
shift 3
MMUSIM=${MMUSIM:-./mmusim}
QEMU=${QEMU:-qemu-system-x86_64}
case $STATE in fresh | huge-zero-allocated | use-zero-page-0) ;;
*) echo "$0: unknown state '$STATE' (fresh, huge-zero-allocated, use-zero-page-0)" >&2; exit 2 ;;
esac

skip() { echo "SKIP: $*"; exit 0; }
command -v "$QEMU" >/dev/null 2>&1 || skip "no $QEMU (apt-get install qemu-system-x86)"
BB=$(command -v busybox) || skip "no busybox (apt-get install busybox-static)"
file -L "$BB" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$BB" 2>&1 | grep -q 'not a dynamic' || skip "$BB is not static (apt-get install busybox-static)"
for t in mkfs.ext4 debugfs cpio xz; do
	command -v $t >/dev/null 2>&1 || skip "no $t (e2fsprogs, cpio, xz-utils)"
done
KERNEL=${GUEST_KERNEL:-$(ls -t "${XDG_CACHE_HOME:-$HOME/.cache}"/mmusim/guest/linux-image-*.deb 2>/dev/null | head -1)}
[ -n "$KERNEL" ] && [ -e "$KERNEL" ] || skip "no guest kernel: set GUEST_KERNEL to a Debian linux-image .deb (README, Tests)"
[ -x "$DIR/steps" ] || { echo "$0: no $DIR/steps" >&2; exit 2; }

G=$DIR/guest W=$DIR/guest.work
rm -rf "$G" "$W" && mkdir -p "$G" "$W/k" "$W/root" || exit 1
if [ -d "$KERNEL" ]; then
	K=$KERNEL
else
	dpkg-deb -x "$KERNEL" "$W/k" || { echo "FAIL: cannot extract $KERNEL"; exit 1; }
	K=$W/k
fi
VMLINUZ=$(ls "$K"/boot/vmlinuz-* 2>/dev/null | head -1)
MODDIR=$(ls -d "$K"/usr/lib/modules/*/ "$K"/lib/modules/*/ 2>/dev/null | head -1)
[ -n "$VMLINUZ" ] && [ -n "$MODDIR" ] || skip "$KERNEL has no boot/vmlinuz-* and lib/modules/*/"

# The modules, dependences first (each .ko's modinfo "depends="), decompressed:
# busybox's insmod hands the file to init_module() as it is.
R=$W/root
mkdir -p "$R"/bin "$R"/modules "$R"/payload "$R"/proc "$R"/sys "$R"/dev "$R"/w || exit 1
: >"$R/modules/order"
modfile() { find "$MODDIR" -name "$1.ko*" -o -name "$(echo "$1" | tr _ -).ko*" | head -1; }
modinfo_dep() { case $1 in *.xz) xz -dc "$1" ;; *.zst) zstd -dc "$1" ;; *) cat "$1" ;; esac |
	tr '\0' '\n' | sed -n 's/^depends=//p' | tr , ' '; }
addmod() {
	local m=$1 f d
	grep -qx "$m" "$R/modules/order" && return 0
	f=$(modfile "$m")
	# built in (modules.builtin) is fine; absent is not
	if [ -z "$f" ]; then
		grep -q "/$m.ko\$\|/$(echo "$m" | tr _ -).ko\$" "$MODDIR/modules.builtin" 2>/dev/null && return 0
		echo "FAIL: module $m is neither in $MODDIR nor built in"; exit 1
	fi
	for d in $(modinfo_dep "$f"); do addmod "$d"; done
	case $f in *.xz) xz -dc "$f" ;; *.zst) zstd -dc "$f" ;; *) cat "$f" ;; esac >"$R/modules/$m.ko" || exit 1
	echo "$m" >>"$R/modules/order"
}
# crc32c: ext4 and jbd2 ask the crypto API for it by name (metadata_csum), which
# would need a modprobe in the guest
for m in virtio_blk crc32c_generic ext4; do addmod $m; done

cp "$BB" "$R/bin/busybox" || exit 1
# mmusim (for config host) and setarch, with the shared libraries ldd names
copy_bin() {
	local src=$1 dst=$2 lib
	cp "$src" "$R$dst" || exit 1
	for lib in $(ldd "$src" | grep -o '/[^ ]*'); do
		mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib" || exit 1
	done
}
mkdir -p "$R/usr/bin"
copy_bin "$MMUSIM" /usr/bin/mmusim
SETARCH=$(command -v setarch) && copy_bin "$SETARCH" /usr/bin/setarch
cp "$DIR/steps" "$R/payload/steps" || exit 1
printf '%s\n' "$@" >"$R/payload/cases"
printf 'STATE=%s\nRUNS=%s\n' "$STATE" "$RUNS" >"$R/payload/params"

cat >"$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm # POSIX shared memory, as a distribution mounts it
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
for m in $(cat /modules/order); do insmod /modules/$m.ko || echo "guest: insmod $m failed"; done
mount -t ext4 /dev/vda /w || { echo "guest: cannot mount /dev/vda"; poweroff -f; }
. /payload/params
O=/w/out T=/w/t
UZP=/sys/kernel/mm/transparent_hugepage/use_zero_page
mkdir -p $O $T
uname -r >$O/uname
cp /payload/steps $T/steps && dd if=/payload/steps of=$T/steps4k bs=4096 2>/dev/null &&
	chmod +x $T/steps $T/steps4k && sync || echo "guest: cannot write the programs"
setarch=""
setarch -R true 2>/dev/null && setarch="setarch -R" && : >$O/setarch
case $STATE in
huge-zero-allocated) (cd $T && ./steps thp-read $T >/dev/null) ;;
use-zero-page-0) echo 0 >$UZP ;;
esac
mmusim config host >$O/host.yaml 2>$O/host.err
# name case bin: RUNS runs, then config host
runs() {
	[ "$1" = file-private-hintless ] && [ -z "$setarch" ] && return
	echo "guest: $1"
	mmusim config host >$O/$1.host0.yaml 2>$O/$1.err
	r=1
	while [ $r -le $RUNS ]; do
		(cd $T && $setarch ./$3 $2 $T >$O/$1.n$r 2>$O/$1.err) || { : >$O/$1.failed; break; }
		r=$((r + 1))
	done
	mmusim config host >$O/$1.host.yaml 2>>$O/$1.err
}
for spec in $(cat /payload/cases); do
	IFS=: read name prog bin <<E2
$spec
E2
	runs $name $prog $bin
done
uzp0=$(cat $UZP)
echo $((1 - uzp0)) >$UZP && runs thp-read-use_zero_page=$((1 - uzp0)) thp-read steps
echo $uzp0 >$UZP
: >$O/done
sync
umount /w
poweroff -f
EOF
chmod +x "$R/init" || exit 1
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) >"$W/initrd.gz" || exit 1

truncate -s 512M "$W/disk.img" && mkfs.ext4 -q -F "$W/disk.img" >/dev/null || exit 1
timeout "${GUEST_TIMEOUT:-1200}" "$QEMU" -accel tcg -cpu max,la57=off -smp 1 -m "${GUEST_MEM:-2048}" \
	-nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$VMLINUZ" -initrd "$W/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 rdinit=/init" \
	-drive "file=$W/disk.img,format=raw,if=virtio,cache=unsafe" \
	</dev/null >"$G/console.log" 2>&1
rc=$?
debugfs -R "rdump /out $W" "$W/disk.img" >/dev/null 2>&1
cp -r "$W"/out/. "$G"/ 2>/dev/null
if [ ! -e "$G/done" ]; then
	echo "FAIL: the guest did not finish (qemu exit $rc); its console:"
	tail -20 "$G/console.log"
	exit 1
fi
rm -rf "$W"
exit 0
