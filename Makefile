# mmusim - plain GNU make with pkg-config (STYLE.md rule 10).
#   make          build ./mmusim
#   make check    install missing packages if root, build, run unit + end-to-end tests
#   make demo     the embedded default: base vs hugetlbfs, table + plots/out/demo.png
#   make bench    speed against a floor measured in the same run
#   make figures  every experiment (configs/experiments/) swept and drawn into plots/out/ (minutes)
#   make native-virt  issue 15's native chase/GUPS table on this machine into plots/data/ (minutes)
#   make native-model this machine's ns per step beside the overlap model's, into plots/data/ (minutes)
#   make native-thp   guest THP's costs apart from translation on this machine, into plots/data/ (minutes)
#   make native-guest tests/native.sh with its native side in a QEMU guest's stock kernel (minutes)
#   make debug    ASan + UBSan build in build/debug/ (make check-debug runs the suite with it)
#   make deps     apt-get install whatever Debian package is missing
#   make install  PREFIX=... (default /usr/local): binary, configs, traces/, plots/ scripts, man page,
#                 and the library: include/mmusim.h, lib/libmmusim.a, lib/pkgconfig/mmusim.pc
#   make fuzz     libFuzzer harnesses (clang, ASan + UBSan), FUZZ_SECONDS each (tests/fuzz/run.sh)
#   make golden-update   re-bless tests/golden/ on purpose

PKGS := gsl yaml-0.1 check zlib liblzma libzstd jansson libxxhash
DEBS := build-essential pkg-config libgsl-dev libyaml-dev check libsubunit-dev zlib1g-dev \
        liblzma-dev libzstd-dev libjansson-dev libxxhash-dev gnuplot-nox zstd xz-utils gzip valgrind parallel groff-base
TOOLS := gnuplot zstd xz gzip pkg-config cc parallel groff

CC ?= cc
OPT ?= -O2
WERROR ?= $(if $(CI),-Werror,)
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes $(WERROR)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS ?= $(OPT) -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -Iinclude -Isim -Icapture $(WARN) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP
LDLIBS := $(PKG_LIBS) -lpthread -lm

BUILD ?= build/release
SRCS := $(wildcard sim/*.c)
# the command line (main.c and the cli*.c it shares helpers with) is not in the library
CLI_SRCS := sim/main.c $(wildcard sim/cli*.c)
# both halves of capture sit in capture/: the Valgrind tool (mm_main.c) and its launcher and
# decoder (capture.c), which speak capture/wire.h; the launcher is a command-line tool, not
# the simulator's library (linked into mmusim and the capture tests)
CAPTURE_OBJS := $(BUILD)/capture.o
CLI_OBJS := $(CLI_SRCS:sim/%.c=$(BUILD)/%.o) $(CAPTURE_OBJS)
# the command line's tools are not the simulator either: the help texts, the demo, the sweep
# scheduler and gnuplot's figures, in an archive of their own that mmusim and the tests link
# (libmmusim.a holds the simulator: `make install` and tests/e2e_embed.sh)
TOOL_SRCS := sim/usage.c sim/demo.c sim/sweep.c sim/sweep_run.c sim/plot.c
TOOL_OBJS := $(TOOL_SRCS:sim/%.c=$(BUILD)/%.o)
LIB_SRCS := $(filter-out $(CLI_SRCS) $(TOOL_SRCS),$(SRCS))
LIB_OBJS := $(LIB_SRCS:sim/%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/check_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
EMBED := $(BUILD)/examples/embed

.PHONY: all check check-run demo bench figures native-virt native-model native-thp native-guest debug check-debug deps ensure-deps golden-update clean tests install fuzz

all: mmusim vgtool

# mmusim's Valgrind tool (capture/mm_main.c): built where Debian's valgrind package provides the
# tool headers and the static core archives, linked as Valgrind's own tools are (docs/README in
# valgrind's source: Makefile.tool.am's LDFLAGS for amd64-linux), into $(VGLIB) beside links to
# the stock files (vgpreload_core-amd64-linux.so, default.supp, ...) so that it runs with
# VALGRIND_LIB=$(VGLIB). `mmusim capture` finds it there (sim/capture.c); skipped otherwise.
VG_INC := /usr/include/valgrind
VG_ARCH := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/valgrind /usr/lib/valgrind /usr/local/lib/valgrind))
VG_STOCK := $(patsubst %/lackey-amd64-linux,%,$(firstword $(wildcard /usr/libexec/valgrind/lackey-amd64-linux /usr/lib/x86_64-linux-gnu/valgrind/lackey-amd64-linux /usr/lib/valgrind/lackey-amd64-linux)))
VG_OK := $(and $(wildcard $(VG_INC)/pub_tool_basics.h),$(wildcard $(VG_ARCH)/libcoregrind-amd64-linux.a),$(VG_STOCK),$(filter x86_64,$(shell uname -m)))
VGLIB := $(BUILD)/valgrind
VGTOOL := $(VGLIB)/mmusim-amd64-linux
VG_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter $(WERROR) -fno-strict-aliasing \
	-fno-builtin -fno-stack-protector -fno-pie -fno-pic -fomit-frame-pointer -DVGA_amd64=1 \
	-DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1 -I$(VG_INC)
VG_LDFLAGS := -static -nodefaultlibs -nostartfiles -u _start -no-pie -Wl,--build-id=none \
	-Wl,-Ttext-segment=0x58000000

.PHONY: vgtool
ifneq ($(VG_OK),)
vgtool: $(VGTOOL)
$(VGTOOL): capture/mm_main.c capture/wire.h include/mmusim_roi.h | $(BUILD)
	@mkdir -p $(VGLIB)
	@for f in $(VG_STOCK)/*; do ln -sfn "$$f" $(VGLIB)/; done
	$(CC) $(VG_CFLAGS) -c -o $(BUILD)/mm_main.vg.o capture/mm_main.c
	$(CC) -o $@.tmp $(BUILD)/mm_main.vg.o $(VG_LDFLAGS) $(VG_ARCH)/libcoregrind-amd64-linux.a \
		$(VG_ARCH)/libvex-amd64-linux.a $(VG_ARCH)/libgcc-sup-amd64-linux.a -lgcc
	mv -f $@.tmp $@
else
vgtool:
	@echo "mmusim's Valgrind tool skipped: no valgrind tool headers/archives (apt-get install valgrind)"
endif

mmusim: $(BUILD)/mmusim
	cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/mmusim: $(CLI_OBJS) $(BUILD)/libmmusim_tools.a $(BUILD)/libmmusim.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libmmusim.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libmmusim_tools.a: $(TOOL_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/capture.o: ALL_CFLAGS += -DMMUSIM_VGLIB_BUILD='"$(abspath $(VGLIB))"'
$(BUILD)/capture.o: capture/capture.c | $(BUILD)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/%.o: sim/%.c | $(BUILD)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/check_capture $(BUILD)/tests/check_capture_tool: TEST_OBJS = $(CAPTURE_OBJS)
$(BUILD)/tests/check_capture $(BUILD)/tests/check_capture_tool: $(CAPTURE_OBJS)
$(BUILD)/tests/%: tests/%.c $(BUILD)/libmmusim_tools.a $(BUILD)/libmmusim.a | $(BUILD)
	@mkdir -p $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Isim -Itests -o $@ $< $(TEST_OBJS) $(BUILD)/libmmusim_tools.a $(BUILD)/libmmusim.a $(LDLIBS)

# The installed archive: one relocatable object whose only global symbols are the public
# API's (mmusim_*), so an embedding program's own tlb_*, config_* or err_* names cannot clash.
$(BUILD)/install/libmmusim.a: $(LIB_OBJS)
	@mkdir -p $(BUILD)/install
	$(CC) -r -nostdlib -o $(BUILD)/install/mmusim.o $^
	objcopy --wildcard --keep-global-symbol='mmusim_*' $(BUILD)/install/mmusim.o
	rm -f $@
	ar rcs $@ $(BUILD)/install/mmusim.o

# examples/embed.c as an embedding program builds it: the public header alone
$(EMBED): examples/embed.c include/mmusim.h $(BUILD)/libmmusim.a
	@mkdir -p $(BUILD)/examples
	$(CC) -std=c11 $(WARN) $(CFLAGS) -Iinclude -o $@ $< $(BUILD)/libmmusim.a $(LDLIBS)

$(BUILD):
	mkdir -p $(BUILD)

tests: $(TEST_BINS)

# Dependencies: install what is missing when root, else say the one line to run.
ensure-deps:
	@missing=""; \
	for t in $(TOOLS); do command -v $$t >/dev/null 2>&1 || missing=1; done; \
	pkg-config --exists $(PKGS) 2>/dev/null || missing=1; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory deps; \
	  else echo "mmusim: missing build dependencies; run:"; \
	       echo "  sudo apt-get install -y $(DEBS)"; exit 1; fi; \
	fi

deps:
	@missing=""; \
	for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "all dependencies present"; fi

check: ensure-deps
	@$(MAKE) --no-print-directory check-run

check-run: $(BUILD)/mmusim tests $(EMBED) vgtool
	@BUILD=$(BUILD) sh tests/run.sh $(TEST_BINS)

# the capture tool too: the README's `mmusim capture` example works right after `make demo`
demo: ensure-deps
	@$(MAKE) --no-print-directory mmusim vgtool
	./mmusim demo

bench: ensure-deps
	@$(MAKE) --no-print-directory mmusim
	sh bench/run.sh

# make figures: each experiment configs/experiments/NAME.yaml swept into plots/out/NAME.csv and
# drawn by `mmusim plot` into each of its figures F (FIGS_NAME, default NAME itself) with FIG_F's
# options, as plots/out/F.png and plots/out/F.pdf, which also rewrites the committed script
# plots/F.gp, the data inline: `git diff plots/` then shows a figure whose numbers changed. An
# experiment without FIG_NAME or FIGS_NAME gets `sweep --plot` alone. Each figure draws what the
# experiment's comment claims. A few minutes on two shared cores; not part of make check
# (plots/README.md).
EXPERIMENTS := $(basename $(notdir $(wildcard configs/experiments/*.yaml)))
FIGS_stream := stream stream-change
FIG_stream := -x workload.size -y cycles.translation,cycles.fault --by os.mode --logx --logy --input stream:iterations=1
FIG_stream-change := -x workload.size -y cycles.total --by os.mode --kind bars --base base --input stream:iterations=1
FIG_gups-chase := -x input -y walk.cycles --by os.mode --base base --abs
FIG_tlb-size-real := -x tlb.l1d.4K.entries -y walk.walks --by tlb.stlb.entries --logx --logy --input small.lackey.zst
FIGS_fragmentation := fragmentation fragmentation-fallbacks
FIG_fragmentation := -x os.fragmentation.unmovable -y memory.huge_coverage --input gups:size=512M,updates=1000000
FIG_fragmentation-fallbacks := -x os.fragmentation.unmovable -y vmstat.thp_fault_alloc,vmstat.thp_fault_fallback --input gups:size=512M,updates=1000000
FIGS_mthp := mthp-walks mthp-walks-frag mthp-walk-cycles mthp-fault-cycles mthp-rss
MTHP_FIG := -x os.thp_anon --facet input
FIG_mthp-walks := $(MTHP_FIG) --size 1400x900 -y walk.walks --by tlb.coalesce --values --where os.fragmentation.unmovable=0 --title 'page walks per anonymous THP size, coalescing on and off, clean machine'
FIG_mthp-walks-frag := $(MTHP_FIG) --size 1400x900 -y walk.walks --by tlb.coalesce --values --where os.fragmentation.unmovable=1 --title 'page walks per anonymous THP size, coalescing on and off, every pageblock pinned'
FIG_mthp-walk-cycles := $(MTHP_FIG) --size 1400x900 -y walk.cycles --by tlb.coalesce --values --where os.fragmentation.unmovable=0 --title 'walk cycles per anonymous THP size, coalescing on and off, clean machine'
FIG_mthp-fault-cycles := $(MTHP_FIG) --size 2000x1000 -y cycles.fault --by os.fragmentation.unmovable --values --where tlb.coalesce=amd --title 'fault cycles per anonymous THP size, clean and every pageblock pinned'
FIG_mthp-rss := -x input -y memory.rss_bytes --by os.thp_anon --base 16K-2M:never --kind bars --where os.fragmentation.unmovable=0 --where tlb.coalesce=amd --size 1400x600 --title 'resident memory against 4 KiB pages only, per anonymous THP size, clean machine'

# virt: the sweep, then plots/virt.awk's table of guest THP's % change per setup beside this
# machine's measurement (plots/data/virt-native.csv), drawn as bars of values
figure-virt: mmusim
	@mkdir -p plots/out
	./mmusim sweep configs/experiments/virt.yaml -o plots/out/virt.csv --quiet
	awk -f plots/virt.awk plots/data/virt-native.csv plots/data/virt-native-sessions.csv plots/out/virt.csv >plots/out/virt-change.csv
	$(foreach o,png pdf,./mmusim plot plots/out/virt-change.csv -x case -y '% change in time per step' --by setup --kind bars --values --title 'guest THP against guest 4 KiB pages, by how the guest runs' -o plots/out/virt.$(o) $(if $(filter png,$(o)),--script plots/virt.gp) && ) true

# kv-bloat: the sweep (the end state per mode), then RSS over time, from a timeline of the
# experiment's own workload spec (read from its YAML) under base and thp
KV_BLOAT_WL = $(shell sed -n 's/^workload: "\(.*\)"$$/\1/p' configs/experiments/kv-bloat.yaml)
figure-kv-bloat: mmusim
	@mkdir -p plots/out
	./mmusim sweep configs/experiments/kv-bloat.yaml -o plots/out/kv-bloat.csv --quiet
	./mmusim run -w '$(KV_BLOAT_WL)' --modes base,thp --timeline plots/out/kv-bloat-timeline.csv --timeline-ms 500 --quiet
	$(foreach o,png pdf,./mmusim plot plots/out/kv-bloat-timeline.csv -y rss_bytes --title 'kv (HawkEye Redis): insert, delete 80 %, wait, insert again' -o plots/out/kv-bloat.$(o) $(if $(filter png,$(o)),--script plots/kv-bloat.gp) && ) true

# ingens-fairness: the sweep (the end state, unfragmented and fragmented), then the fragmented
# point's (the sweep's last) huge-page coverage over time per process: its own listed run
# command with a timeline in place of the report
figure-ingens-fairness: mmusim
	@mkdir -p plots/out
	./mmusim sweep configs/experiments/ingens-fairness.yaml -o plots/out/ingens-fairness.csv --quiet
	./mmusim sweep configs/experiments/ingens-fairness.yaml -o plots/out/ingens-fairness.csv --list | tail -n 1 | sed 's|^mmusim |./mmusim |; s| --json [^ ]*$$| --timeline plots/out/ingens-fairness-timeline.csv --timeline-ms 2|' | sh
	$(foreach o,png pdf,./mmusim plot plots/out/ingens-fairness-timeline.csv -y huge_coverage --by process --title 'two identical GUPS processes, the second started later, 80 % of pageblocks pinned' -o plots/out/ingens-fairness.$(o) $(if $(filter png,$(o)),--script plots/ingens-fairness.gp) && ) true

# cbmm-latency: the sweep (its points' reports afresh: the CDF reads every report in the
# directory), the reports' fault-latency histograms as CDF rows (merge --latency), then the CDF
# and its tail (the share of faults at or above each power of two, log y) per process
CBMM_FIG = -x log2_cycles --by os.fragmentation.unmovable --facet process --size 1400x600
figure-cbmm-latency: mmusim
	@mkdir -p plots/out
	rm -rf plots/out/cbmm-latency.csv.d
	./mmusim sweep configs/experiments/cbmm-latency.yaml -o plots/out/cbmm-latency.csv --quiet
	./mmusim merge --latency plots/out/cbmm-latency-cdf.csv plots/out/cbmm-latency.csv.d/point-*.json
	$(foreach o,png pdf,./mmusim plot plots/out/cbmm-latency-cdf.csv $(CBMM_FIG) -y cdf --title 'fault latency per process, 0 to 90 % of pageblocks pinned' -o plots/out/cbmm-latency.$(o) $(if $(filter png,$(o)),--script plots/cbmm-latency.gp) && ) true
	$(foreach o,png pdf,./mmusim plot plots/out/cbmm-latency-cdf.csv $(CBMM_FIG) -y ccdf --logy --title 'the tail: share of faults at or above 2^log2_cycles cycles' -o plots/out/cbmm-latency-tail.$(o) $(if $(filter png,$(o)),--script plots/cbmm-latency-tail.gp) && ) true

figures: ensure-deps
	@$(MAKE) --no-print-directory mmusim
	@$(MAKE) --no-print-directory $(EXPERIMENTS:%=figure-%)

figure-%: mmusim
	@mkdir -p plots/out
	./mmusim sweep configs/experiments/$*.yaml -o plots/out/$*.csv --quiet $(if $(FIG_$*)$(FIGS_$*),,--plot plots/out/$*.png)
	$(foreach f,$(or $(FIGS_$*),$(if $(FIG_$*),$*)),./mmusim plot plots/out/$*.csv $(FIG_$(f)) -o plots/out/$(f).png --script plots/$(f).gp && ./mmusim plot plots/out/$*.csv $(FIG_$(f)) -o plots/out/$(f).pdf && ) true

# make native-virt: issue 15's native table on this machine (tests/native/virt_chase.c: a
# pointer chase over one line per 4 KiB page at 16M-1G and GUPS over 1G, 4 KiB pages against
# THP, median of 5 runs) into plots/data/virt-native.csv, with the machine, date and every run in
# plots/data/virt-native.txt (plots/data/README.md). Minutes, and it wants a quiet machine: not
# part of make check, which runs only its --quick smoke mode (tests/virt_native.sh).
native-virt: $(BUILD)/virt_chase
	sh tests/native/virt_measure.sh $(BUILD)/virt_chase plots/data

# make native-model: the model checked against this machine (tests/native/model_compare.sh):
# virt_chase --model (chase and GUPS at 64M, 256M, 1G, a STREAM triad, 4 KiB and THP, median
# of 5, and the clock) beside mmusim sweep configs/experiments/native-model.yaml (cpu.model
# overlap, configs/zen5.yaml, virt.mode shadow), into plots/data/native-model.{csv,md,txt}.
# Minutes, and it wants a quiet machine: not part of make check, not a timed test.
native-model: mmusim $(BUILD)/virt_chase
	sh tests/native/model_compare.sh $(BUILD)/virt_chase ./mmusim plots/data

# make native-thp: where guest THP's time goes on this machine (tests/native/thp_causes.c: the
# chase's first touch, first and second laps, steady state with and without interruptions, 4 KiB
# pages against THP, 5 runs at 64M, 256M and 1G) into plots/data/thp-causes.csv. Minutes.
native-thp: $(BUILD)/thp_causes
	@f=plots/data/thp-causes.csv; if [ -e $$f ] && [ ! -f $$f ]; then echo "$$f exists and is not a regular file" >&2; exit 2; fi; \
	$(BUILD)/thp_causes >$$f.tmp && mv -f $$f.tmp $$f && cat $$f

# make native-guest: tests/native.sh with its native runs and its config host in a QEMU (TCG)
# guest booted from a stock Debian kernel (tests/native/guest.sh, GUEST_KERNEL: a linux-image
# .deb; README, Testing), in three states of the zero pages: as booted, the huge zero page
# allocated before the suite, use_zero_page 0. The capture and the replay run here. Minutes,
# so not part of make check; each state prints "SKIP: why" and counts as passed without qemu
# or the kernel.
native-guest: mmusim vgtool
	@st=0; for s in fresh huge-zero-allocated use-zero-page-0; do \
		echo "== NATIVE_GUEST=$$s"; NATIVE_GUEST=$$s bash tests/native.sh || st=1; \
	done; exit $$st

$(BUILD)/thp_causes: tests/native/thp_causes.c tests/native/native_lib.h | $(BUILD)
	$(CC) -std=c11 -O2 -g $(WARN) -o $@ $<

$(BUILD)/virt_chase: tests/native/virt_chase.c tests/native/native_lib.h | $(BUILD)
	$(CC) -std=c11 -O2 -g $(WARN) -o $@ $<

debug:
	@$(MAKE) --no-print-directory BUILD=build/debug OPT="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" build/debug/mmusim

# (ASan + UBSan run a suite 2-4x slower: Check's per-test timeouts are scaled to match)
check-debug: ensure-deps
	@CK_TIMEOUT_MULTIPLIER=4 $(MAKE) --no-print-directory BUILD=build/debug OPT="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" check-run

golden-update: mmusim
	sh tests/golden.sh update

# make install PREFIX=/opt/mmusim: the binary, the machine, experiment and sweep configs, the
# committed traces and figure scripts (share/mmusim/traces, share/mmusim/plots), the man page,
# the public header, libmmusim.a (public symbols only, see above) and mmusim.pc. Only the static
# archive is installed, so the libraries it needs are in Requires and Libs, not their .private
# forms: plain `pkg-config --libs mmusim` links, and so does --static.
PREFIX ?= /usr/local
SHARE := $(DESTDIR)$(PREFIX)/share/mmusim
LIB_PKGS := gsl yaml-0.1 zlib liblzma libzstd jansson libxxhash
VERSION := $(shell sed -n 's/^\#define MMUSIM_VERSION "\(.*\)"/\1/p' sim/provenance.h)
install: mmusim vgtool $(BUILD)/install/libmmusim.a
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/configs/experiments $(SHARE)/configs/sweeps \
		$(SHARE)/traces $(SHARE)/plots $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 mmusim $(DESTDIR)$(PREFIX)/bin/mmusim
	install -m 644 configs/*.yaml $(SHARE)/configs/
	install -m 644 configs/experiments/*.yaml $(SHARE)/configs/experiments/
	for f in configs/sweeps/*.yaml; do [ -e "$$f" ] && install -m 644 "$$f" $(SHARE)/configs/sweeps/ || true; done
	install -m 644 traces/README.md traces/*.zst $(SHARE)/traces/
	install -m 644 plots/README.md plots/*.gp $(SHARE)/plots/
	install -m 644 doc/mmusim.1 $(DESTDIR)$(PREFIX)/share/man/man1/mmusim.1
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/mmusim.h include/mmusim_roi.h $(DESTDIR)$(PREFIX)/include/
	if [ -x $(VGTOOL) ]; then install -d $(DESTDIR)$(PREFIX)/lib/mmusim/valgrind && \
		install -m 755 $(VGTOOL) $(DESTDIR)$(PREFIX)/lib/mmusim/valgrind/ && \
		for f in $(VG_STOCK)/*; do ln -sfn "$$f" $(DESTDIR)$(PREFIX)/lib/mmusim/valgrind/; done; \
	else echo "mmusim's Valgrind tool not installed (not built)"; fi
	install -m 644 $(BUILD)/install/libmmusim.a $(DESTDIR)$(PREFIX)/lib/libmmusim.a
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' \
		'datadir=$${prefix}/share/mmusim' '' \
		'Name: mmusim' 'Description: x86-64 MMU and Linux memory manager simulator (include/mmusim.h)' \
		'Version: $(VERSION)' 'Requires: $(LIB_PKGS)' 'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -lmmusim -lpthread -lm' >$(DESTDIR)$(PREFIX)/lib/pkgconfig/mmusim.pc

FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh

clean:
	rm -rf build mmusim

-include $(LIB_OBJS:.o=.d) $(TOOL_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_BINS:=.d)
