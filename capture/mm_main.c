/*
 * mm_main.c - mmusim's Valgrind tool ("--tool=mmusim"): writes a program's
 * memory references, its initial mappings, its mapping system calls and its
 * thread switches, and the dependences of its references' addresses on its
 * loads, as an mtr record stream (traces/README.md; version 6 with the
 * process events) to a file descriptor, framed (capture/wire.h) for
 * `mmusim capture` (capture/capture.c), which merges the streams of every
 * process into one file and compresses it.
 *
 * What is counted is what lackey --trace-mem=yes prints (valgrind
 * docs, "Lackey: an example tool"; the IR is documented in libvex_ir.h):
 * - one instruction fetch per guest instruction (Ist_IMark: address, length);
 * - a load per Iex_Load (in an Ist_WrTmp) and per Ist_LoadG, a store per
 *   Ist_Store and Ist_StoreG, of the size of the loaded/stored type;
 * - a dirty helper's declared memory effect (mFx, mAddr, mSize): a load for
 *   Ifx_Read, a store for Ifx_Write, both for Ifx_Modify;
 * - Ist_CAS: a load and a store of the data size (twice it for a double CAS);
 *   Ist_LLSC: a load (load-linked) or a store (store-conditional);
 * - a store that directly follows a load of the same size from the same IR
 *   address atom, with no instruction fetch, guarded reference or side exit
 *   between them, becomes one modify (M) record.
 * So a deterministic program gives the same counts by kind under both tools.
 * IR before the first IMark (the preamble) is not instrumented.
 *
 * Speed: instead of one helper call per reference (lackey prints each one),
 * the references of a stretch of IR are gathered into a group whose constant
 * parts (every fetch address and size, every data size and kind) live in a
 * descriptor made at translation time; one dirty call per group passes the
 * descriptor and up to MM_ARGS data addresses. A group ends at a side exit
 * (Ist_Exit: what precedes it must be recorded whether or not it is taken),
 * at the end of the superblock, at a guarded reference (which gets a guarded
 * call of its own), and when it is full. The helper encodes mtr records into a
 * buffer that is written out in frames when nearly full and at exit.
 *
 * Pipe framing (capture/wire.h, shared with capture/capture.c): the records
 * are flushed in frames of at most PIPE_BUF bytes tagged with the process's
 * pid, so that every process the capture follows can write to one pipe; a
 * flush is made before every system call (and when the buffer is nearly
 * full), so that the records a process made before a call that another
 * process can observe (a write to a pipe, a futex wake, an exit) are in the
 * pipe before that call is made: see capture.c for the order this gives.
 *
 * Options: --out-fd=N (required: where the frames go), --skip-insns=N,
 * --max-insns=N (a region of interest by instruction count, exact to the
 * instruction), --roi=yes (nothing is recorded until the program's
 * MMUSIM_ROI_BEGIN(), include/mmusim_roi.h; without it, the requests still
 * stop and restart the recording). A ROI record (the instructions skipped so
 * far) marks each start of recording after a pause.
 *
 * The memory a region starts from: while nothing is recorded (before the
 * region, in a pause; not after --max-insns), each 4 KiB page the program
 * touches is written, the first time, as a TOUCH record (mtr version 3) saying
 * how -- a load, a store (or modify), an instruction fetch -- and a store to a
 * page first touched otherwise as a second TOUCH (the write-protect fault Linux
 * takes there), in order with the mapping calls, so the replay faults them in
 * (the kernel model only) as Linux did and the region finds them resident, as
 * the program left them. A per-page state (touched, written) is kept in an
 * open-addressing hash table of page numbers (pg_*: host memory grows with the
 * pages touched while not recording, 16 bytes a page at most twice over),
 * emptied when a recording starts (a later pause records afresh: a touch
 * of a page the replay already has is a no-op there) and for the range of a
 * munmap, a MAP_FIXED mmap, an mremap's old range and a discarding madvise (their pages
 * are gone: a later touch faults again); one page per side (fetch, data) is
 * remembered with its state, so repeats cost one compare, as the recording's
 * own path.
 *
 * Fork (and vfork, and clone without CLONE_VM; a thread is not a process):
 * the child runs on under Valgrind with this tool (Valgrind follows a fork
 * without being asked) and writes its own stream to the same pipe, tagged
 * with its pid; the parent sends WIRE_FORK with the child's pid right after
 * the call returns, before its next record. The child's stream starts afresh
 * (predicted addresses 0, as the mtr reader starts a forked process) with a
 * THREAD record; it has no MAP records: its address space is its parent's,
 * copied (copy_page_range()). Both sides forget which pages were written
 * while not recording (the pages are write-protected for copy-on-write after
 * the fork: a store there is a write fault again). Dependences reach back over
 * the child's own loads only. --skip-insns and --max-insns count per process,
 * the child from its parent's count at the fork.
 *
 * Exec (valgrind --trace-children=yes, which capture.c passes): the trace
 * follows the image that runs. When the traced process calls execve(), the
 * frames so far belong to an image that is about to go: Valgrind restarts
 * itself on the new program with the same options (PRE(sys_execve) passes
 * VG_(args_for_valgrind) on), a new instance of this tool writes a new mtr
 * stream from the new image's first instruction, and capture.c drops the old
 * one. So `capture -- env PROG`, `sh -c 'exec PROG'`, a #!/usr/bin/env script
 * or a launcher shim give PROG's own trace. What crosses the exec: the
 * descriptor (its close-on-exec flag cleared, and --out-fd rewritten in
 * VG_(args_for_valgrind) to its number in Valgrind's reserved range, since the
 * original number belongs to the program). Out-of-band frames tell capture.c
 * what happens (mm_note()): "MMSX" + the program's path at the start of each
 * image (anything before it is dropped), "MMSE" + the path at each execve()
 * call ("MMSE" with no path when the call failed: the image goes on). An MMSE
 * not followed by MMSX when Valgrind exits is an exec that could not be
 * followed (Valgrind could not start the program: a platform the tool is not
 * built for); capture.c then fails naming the program. A set-user-ID or
 * set-group-ID program cannot run under Valgrind (its execve() fails with
 * EACCES, as valgrind(1) says for --trace-children): the tool says so. A
 * forked child is followed across its exec as the first process is: capture.c
 * makes it an EV_EXEC of that process, and the new image's MAP records follow.
 *
 * prctl(PR_SET_THP_DISABLE, arg) is an EV_PRCTL event (mtr version 6): it
 * changes the THP policy of the process (and of its children).
 *
 * Markers: each successful getppid() (a call with no effect on memory that
 * a program can make at will) is a MARKER record, in order with the
 * references, so that a replay can report its counters there (`run --steps`;
 * tests/native/ compares them with the kernel's at the same points).
 *
 * Dependences (mtr version 4's DEP records, its header flag "dependences
 * recorded"): which earlier load the ADDRESS of each reference derives from,
 * through registers and through memory. Every value carries a tag, as memcheck
 * carries definedness: a shadow I64 per IR temporary (an IR temporary of the
 * output, created where the value is), per general-purpose register (the 8
 * bytes of Valgrind's first shadow guest-state area at the register's offset)
 * and per 8-byte word of memory (mm_sh_load(), mm_sh_store(): a map of 32 KiB
 * secondaries, one per 64 KiB chunk the program stores words to). A tag is
 * MM_TAG0 + the load's number in the stream (loads and modifies counted from
 * 1, as the reader counts them), 1..MM_TAG0 for a load made while nothing is
 * recorded, 0 for none. The rules:
 * - a load's value: its own tag (the group's ld_base, read once per group,
 *   plus its index in the group), except that an 8-byte load of a word
 *   stored with the tag of one of the MM_DEP_WINDOW loads before it carries
 *   that tag instead (a spilled register, a pointer stored and loaded back:
 *   the core forwards the stored value, so what uses it waits for the load
 *   that produced it, not for the reload);
 * - an operation's result: the most recent (largest) of its operands' tags;
 *   an 8- or 16-bit write to a register keeps the rest's tag (the larger);
 * - a register write puts the tag, a word store (Ity_I64) puts the tag into
 *   the word (a store of an untagged value, a constant, leaves the word's);
 * - no tag: vector and x87 registers, condition-code and other helpers'
 *   results (cmov's condition is not its address), what a dirty helper
 *   writes, guarded stores' and CAS's words.
 * A data reference whose address atom has a tag has its tag stored into
 * dep_tag[] before its group's call; mm_group() then writes a DEP with the
 * distance back in loads, if the load is in this stream and less than
 * MM_DEP_WINDOW loads back (an older one has retired from any core: the
 * reference is as good as independent for timing, and the trace stays
 * smaller: on `make bench`'s capture row, xz -6, 59 % of the data references
 * get a DEP, and the .zst trace grows from 0.19 to 0.32 bytes per reference).
 * Only tags that something uses get IR (a backward
 * pass, sh_need(); a register's tag is reread or rewritten only when this
 * superblock does not know it, sh_reg_get()/sh_reg_put()). Where --skip-insns
 * or --max-insns cuts a group, the loads after the cut in that group carry no
 * tag (the group's tags were made for its start).
 *
 * Left out: a failed mapping system call is not recorded (the replay drops
 * them, as the lackey reader does); thread ids are Valgrind's (1 = the main
 * thread), not the kernel's. Descriptors of translations that Valgrind
 * discards are not freed (a few bytes per superblock).
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_aspacehl.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_clreq.h"
#include "pub_tool_xarray.h"
#include "pub_tool_clientstate.h"
#include "libvex_guest_amd64.h"

#include "../include/mmusim_roi.h"
#include "wire.h"

/*
 * Not in the tool headers, but exported by libcoregrind (pub_core_libcfile.h):
 * move a descriptor into Valgrind's reserved range, out of the client's reach;
 * the path behind a descriptor.
 */
extern Int VG_(safe_fd)(Int oldfd);
extern Bool VG_(resolve_filename)(Int fd, const HChar **buf);
extern Addr VG_(brk_base); /* pub_core_clientstate.h: where the client's break starts */
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg); /* pub_core_libcfile.h */
extern Bool VG_(clo_trace_children); /* pub_core_options.h: --trace-children */

#define MM_ARGS 5      /* data addresses per helper call (amd64 dirty calls take 6 arguments) */
#define MM_GROUP 128   /* references per group at most */
#define MM_BUF (1u << 20)
#define MM_SLACK 8192  /* room kept for one group (128 x 10 bytes) or a path record */

/* mtr (sim/trace_mtr.c): tags and kinds. */
enum { K_I = 0, K_L = 1, K_S = 2, K_M = 3 };
enum { T_END = 0xc0, T_EVENT = 0xc1, T_MAP = 0xc3, T_THREAD = 0xc4, T_FILE = 0xc5, T_FORK = 0xc6,
       T_ROI = 0xc7, T_MARKER = 0xc8, T_TOUCH = 0xc9, T_DEP = 0xca };
enum { TOUCH_READ = 0, TOUCH_WRITE = 1, TOUCH_FETCH = 2 }; /* sim/trace.h enum touch_how */

/*
 * Dependences (see "Dependences" in the header). MM_DEP_WINDOW: a load this
 * many loads back or more is at least as many instructions back, so it has
 * left the reorder buffer of any x86-64 core (the largest: 512 entries,
 * Intel's Golden Cove, Intel 64 and IA-32 Architectures Optimization
 * Reference Manual, "Golden Cove microarchitecture"; AMD Zen 5: 448): its value
 * is architectural and nothing waits for it.
 * Tags: 0 none; 1..MM_TAG0 a load not recorded (outside the region);
 * MM_TAG0 + n the n-th load or modify record of the stream.
 */
#define MM_DEP_WINDOW 512
#define MM_TAG0 (2 * MM_DEP_WINDOW)
#define SM_CHUNK 16      /* shadow memory: a secondary map per 64 KiB of the client */
#define SM_PRIM 21       /* primary map entries (log2): 2^37 bytes, Valgrind's amd64 client space */
#define SM_WORDS (1u << (SM_CHUNK - 3))
#define F_DEP 1          /* mm_ent.flags: the address has a tag, in dep_tag[slot] */
enum { EV_MMAP, EV_MUNMAP, EV_MPROTECT, EV_MADVISE, EV_BRK, EV_MREMAP, EV_MARKER,
       EV_MLOCK, EV_MUNLOCK, EV_MLOCKALL, EV_MUNLOCKALL,
       EV_FORK, EV_SWITCH, EV_EXIT, EV_EXEC, EV_PRCTL }; /* sim/trace.h enum ev_kind */
#define PR_SET_THP_DISABLE 41 /* include/uapi/linux/prctl.h */

struct mm_ent {
	Addr addr;   /* fetch: the instruction's address */
	UShort size;
	UChar kind;
	UChar arg;   /* data: index of the helper argument holding the address */
	UChar flags; /* F_DEP */
	UChar slot;  /* F_DEP: the address's tag is dep_tag[slot] (shared by references with one tag) */
};

struct mm_group {
	UInt n;
	struct mm_ent e[0];
};

/* ---------------------------------------------------------------- output */

static Long clo_fd = -1;
static Long clo_skip, clo_max;
static Bool clo_roi;     /* --roi=yes: record only between the program's ROI client requests */
static Int out_fd = -1;
static UInt my_pid;      /* the frames' pid (getpid(); a forked child's its own) */
static Bool forked;      /* the atfork parent handler ran: the call was a fork */
static UChar *buf;       /* the stream not yet flushed */
static UInt blen;        /* bytes in buf */
static ULong n_flushed;  /* records flushed so far (n_recs then) */
static Addr expect[2];
static ULong n_insns, n_refs, n_recs, n_seen;
static Bool recording;   /* inside the region of interest */
static Bool roi_client;  /* the program used MMUSIM_ROI_BEGIN/END: it decides */
static Bool roi_done;    /* --max-insns reached */
static Bool started;     /* the initial mappings are written */
static ThreadId cur_tid;
static ULong touch_vpn;  /* the page of the last TOUCH record + 1 (as the reader's) */
static ULong n_loads;    /* load and modify records written, over every stream of this process */
static ULong loads0;     /* n_loads when this stream started (a forked child's starts afresh) */
static ULong ld_base;    /* the IR's k-th load of a group gets tag ld_base + k (0: not recording) */
static ULong dep_tag[MM_ARGS]; /* the IR puts a group's address tags here, one per tag */
static UInt **sm_prim;   /* shadow memory: the secondary map of each 64 KiB chunk, or NULL */

static void wire_put32(UChar *p, UInt v)
{
	VG_(memcpy)(p, &v, 4);
}

/* Write frame @f of @n bytes whole (one write: at most PIPE_BUF bytes, atomic). */
static void wire_write(const UChar *f, UInt n)
{
	Int r = VG_(write)(out_fd, f, (Int)n);

	if (r != (Int)n) {
		VG_(umsg)("mmusim: cannot write the trace (fd %d): stopping output\n", out_fd);
		out_fd = -1;
	}
}

/* A frame header: @magic, @len payload bytes, @flags, @nrec. */
static void wire_header(UChar *f, UInt magic, UInt len, UInt flags, UInt nrec)
{
	UShort l = (UShort)len, fl = (UShort)flags;

	wire_put32(f + WIRE_OFF_MAGIC, magic);
	VG_(memcpy)(f + WIRE_OFF_LEN, &l, 2);
	VG_(memcpy)(f + WIRE_OFF_FLAGS, &fl, 2);
	wire_put32(f + WIRE_OFF_PID, my_pid);
	wire_put32(f + WIRE_OFF_NREC, nrec);
	VG_(memcpy)(f + WIRE_OFF_INSNS, &n_insns, 8);
	VG_(memcpy)(f + WIRE_OFF_REFS, &n_refs, 8);
}

/* Everything buffered, as frames of at most PIPE_BUF bytes, the last one flagged WIRE_LAST. */
static void out_flush(void)
{
	UChar f[WIRE_MAX];
	UInt off = 0;

	if (out_fd < 0 || !blen)
		goto done;
	while (off < blen && out_fd >= 0) {
		UInt n = blen - off > WIRE_PAYLOAD ? WIRE_PAYLOAD : blen - off;
		Bool last = off + n == blen;

		wire_header(f, WIRE_DATA, n, last ? WIRE_LAST : 0,
			    last ? (UInt)(n_recs - n_flushed) : 0);
		VG_(memcpy)(f + WIRE_HDR, buf + off, n);
		wire_write(f, WIRE_HDR + n);
		off += n;
	}
done:
	blen = 0;
	n_flushed = n_recs;
}

/* An out-of-band frame for capture.c: @magic, then @n bytes at @s (not part of the mtr stream). */
static void mm_note_n(UInt magic, const void *s, UInt n)
{
	UChar f[WIRE_MAX];

	if (out_fd < 0)
		return;
	if (n > WIRE_PAYLOAD)
		n = WIRE_PAYLOAD;
	wire_header(f, magic, n, 0, 0);
	if (n)
		VG_(memcpy)(f + WIRE_HDR, s, n);
	wire_write(f, WIRE_HDR + n);
}

static void mm_note(UInt magic, const HChar *s)
{
	mm_note_n(magic, s, s ? (UInt)VG_(strlen)(s) : 0);
}

static inline UChar *put_v(UChar *p, ULong v)
{
	while (v >= 0x80) {
		*p++ = (UChar)(v | 0x80);
		v >>= 7;
	}
	*p++ = (UChar)v;
	return p;
}

static inline UChar *room(void)
{
	if (blen > MM_BUF - MM_SLACK)
		out_flush();
	return buf + blen;
}

static inline UChar *put_ref(UChar *p, Addr a, UInt size, UInt kind)
{
	UInt st = kind != K_I;
	ULong d = a - expect[st], z = (d << 1) ^ (ULong)((Long)d >> 63);
	UInt sz = size <= 15 ? size : 0, form;

	if (!d)
		form = 0;
	else if (z < (1ULL << 49) || a >= (1ULL << 56))
		form = 1; /* a varint of at most 7 bytes */
	else
		form = 2;
	*p++ = (UChar)(form << 6 | sz << 2 | kind);
	if (!sz)
		p = put_v(p, size);
	if (form == 1) {
		p = put_v(p, z);
	} else if (form == 2) {
		for (Int i = 0; i < 7; i++)
			*p++ = (UChar)(a >> (8 * i));
	}
	expect[st] = a + size;
	return p;
}

/* ---------------------------------------------------------------- pages touched while not recording */

#define PG_TOUCHED 1
#define PG_WRITTEN 2

static UWord *pg_key;    /* page number + 1; 0: an empty slot */
static UChar *pg_st;     /* PG_* of the slot's page */
static UWord pg_cap, pg_n; /* slots (a power of two), pages held */
static UWord memo_vpn[2] = { ~0UL, ~0UL }; /* per side (fetch, data): the last page noted */
static UChar memo_st[2];

static inline UWord pg_hash(UWord vpn)
{
	return (UWord)((vpn * 0x9E3779B97F4A7C15ULL) >> 20) & (pg_cap - 1);
}

/* The slot of @vpn, or of the empty slot where it would go. */
static inline UWord pg_slot(UWord vpn)
{
	UWord i = pg_hash(vpn);

	while (pg_key[i] && pg_key[i] != vpn + 1)
		i = (i + 1) & (pg_cap - 1);
	return i;
}

static void pg_grow(void)
{
	UWord *ok = pg_key, oc = pg_cap;
	UChar *os = pg_st;

	pg_cap = oc ? oc * 2 : 4096;
	pg_key = VG_(calloc)("mmusim.pages", pg_cap, sizeof(*pg_key));
	pg_st = VG_(malloc)("mmusim.pages", pg_cap);
	for (UWord j = 0; j < oc; j++)
		if (ok[j]) {
			UWord i = pg_slot(ok[j] - 1);

			pg_key[i] = ok[j];
			pg_st[i] = os[j];
		}
	if (ok) {
		VG_(free)(ok);
		VG_(free)(os);
	}
}

/* Remove slot @i, moving later entries of its probe run back (no tombstones). */
static void pg_del_slot(UWord i)
{
	UWord j = i;

	pg_key[i] = 0;
	pg_n--;
	for (;;) {
		UWord k;

		j = (j + 1) & (pg_cap - 1);
		if (!pg_key[j])
			return;
		k = pg_hash(pg_key[j] - 1);
		/* the entry at j may move to the hole at i if its home k is not in (i, j] */
		if ((i <= j) ? (k <= i || k > j) : (k <= i && k > j)) {
			pg_key[i] = pg_key[j];
			pg_st[i] = pg_st[j];
			pg_key[j] = 0;
			i = j;
		}
	}
}

/* Forget the pages of [@a, @a + @len): they are no longer mapped as they were. */
static void pg_forget(Addr a, ULong len)
{
	UWord lo = a >> 12, hi = (a + len + 4095) >> 12;

	memo_vpn[0] = memo_vpn[1] = ~0UL;
	if (!pg_n || hi <= lo)
		return;
	if (hi - lo <= pg_n) {
		for (UWord v = lo; v < hi; v++) {
			UWord i = pg_slot(v);

			if (pg_key[i])
				pg_del_slot(i);
		}
		return;
	}
	for (UWord i = 0; i < pg_cap; i++)
		while (pg_key[i] && pg_key[i] - 1 >= lo && pg_key[i] - 1 < hi)
			pg_del_slot(i); /* (what moves into slot i is tested again) */
}

/* A recording starts: what was touched before is in the stream. */
static void pg_reset(void)
{
	if (pg_n)
		VG_(memset)(pg_key, 0, pg_cap * sizeof(*pg_key));
	pg_n = 0;
	memo_vpn[0] = memo_vpn[1] = ~0UL;
}

static inline UChar *room(void);

static void put_touch(UWord vpn, UInt how)
{
	UChar *p = room();
	ULong d = (ULong)vpn - touch_vpn;

	*p++ = T_TOUCH;
	*p++ = (UChar)how;
	p = put_v(p, (d << 1) ^ (ULong)((Long)d >> 63));
	touch_vpn = (ULong)vpn + 1;
	blen = (UInt)(p - buf);
	n_recs++;
}

/* Page @vpn touched on @side (0 fetch, 1 data) by @how while not recording. */
static void note_page(UWord vpn, UInt side, UInt how)
{
	UWord i;
	UChar st;

	if (vpn == memo_vpn[side] && (how != TOUCH_WRITE || (memo_st[side] & PG_WRITTEN)))
		return;
	if (2 * (pg_n + 1) > pg_cap)
		pg_grow();
	i = pg_slot(vpn);
	st = pg_key[i] ? pg_st[i] : 0;
	if (!st) {
		put_touch(vpn, how);
		st = PG_TOUCHED | (how == TOUCH_WRITE ? PG_WRITTEN : 0);
		pg_key[i] = vpn + 1;
		pg_n++;
	} else if (how == TOUCH_WRITE && !(st & PG_WRITTEN)) {
		put_touch(vpn, TOUCH_WRITE); /* the write-protect fault after a read */
		st |= PG_WRITTEN;
	}
	pg_st[i] = st;
	memo_vpn[side] = vpn;
	memo_st[side] = st;
}

/* A reference of @size bytes at @a of mtr @kind while not recording. */
static inline void note_ref(Addr a, UInt size, UInt kind)
{
	UInt how = kind == K_I ? TOUCH_FETCH : kind == K_L ? TOUCH_READ : TOUCH_WRITE;
	UWord v = a >> 12, last = (a + (size ? size : 1) - 1) >> 12;

	if (out_fd < 0)
		return;
	for (;; v++) {
		note_page(v, kind != K_I, how);
		if (v >= last)
			break;
	}
}

/* ---------------------------------------------------------------- dependences */

/*
 * Shadow memory: the tag of each 8-byte word (its low 32 bits: a distance is
 * taken modulo 2^32), in a secondary map of 32 KiB per 64 KiB chunk of the
 * client that an 8-byte store has touched (as memcheck's secondary maps):
 * host memory grows with the chunks the program stores words to. The
 * primary map covers 2^37 bytes, Valgrind's amd64 client space (higher
 * addresses wrap: they only ever share tags).
 */
static UInt *__attribute__((noinline)) sm_alloc(UWord i)
{
	return sm_prim[i] = VG_(calloc)("mmusim.shadow", SM_WORDS, sizeof(UInt));
}

/*
 * Called by the IR after each 8-byte load (the helpers' cost is a call per
 * 8-byte load and store; inline IR for them tripled the translation work of
 * the capture row for a 2 % faster run): the tag of the value loaded from @a
 * by a load whose own tag is @own -- the word's tag if that load is less than
 * MM_DEP_WINDOW loads back (it may still be in flight: the core forwards the
 * stored value, and what uses it waits for that load), else @own.
 */
static VG_REGPARM(2) ULong mm_sh_load(ULong own, Addr a)
{
	const UInt *sec = sm_prim[(a >> SM_CHUNK) & ((1UL << SM_PRIM) - 1)];
	UInt d = sec ? (UInt)own - sec[(a >> 3) & (SM_WORDS - 1)] : MM_DEP_WINDOW;

	return d < MM_DEP_WINDOW ? own - d : own;
}

/* After each 8-byte store of a value with tag @tag at @a: the word's tag. */
static VG_REGPARM(2) void mm_sh_store(Addr a, ULong tag)
{
	UWord i = (a >> SM_CHUNK) & ((1UL << SM_PRIM) - 1);
	UInt *sec = sm_prim[i];

	if (UNLIKELY(!sec))
		sec = sm_alloc(i);
	sec[(a >> 3) & (SM_WORDS - 1)] = (UInt)tag;
}

/* The DEP record of a reference whose address has tag @t, if it has one in reach. */
static inline UChar *put_dep(UChar *p, ULong t)
{
	ULong d = n_loads + MM_TAG0 + 1 - t;

	/* a load of this stream (t > MM_TAG0 + loads0: also not a load made while not recording) */
	if (t > MM_TAG0 + loads0 && d - 1 < MM_DEP_WINDOW) {
		*p++ = T_DEP;
		p = put_v(p, d);
		n_recs++;
	}
	return p;
}

/* ---------------------------------------------------------------- helper */

static void put_u(UInt tag, ULong v);

/*
 * The group outside the plain case: before the region of interest (counting
 * the instructions skipped, starting at exactly --skip-insns), with
 * --max-insns (stopping at exactly that many), or after the region.
 */
static void mm_group_roi(struct mm_group *g, const Addr *arg)
{
	for (UInt i = 0; i < g->n; i++) {
		const struct mm_ent *e = &g->e[i];

		if (e->kind == K_I) {
			if (!recording && !roi_client && !roi_done && n_seen >= (ULong)clo_skip) {
				recording = True;
				pg_reset();
				if (clo_skip)
					put_u(T_ROI, n_seen);
			}
			if (recording && clo_max && !roi_client && n_insns >= (ULong)clo_max) {
				recording = False;
				roi_done = True;
			}
			if (!recording) {
				n_seen++;
				if (!roi_done)
					note_ref(e->addr, e->size, K_I);
				continue;
			}
			blen = (UInt)(put_ref(room(), e->addr, e->size, K_I) - buf);
			n_insns++;
		} else if (recording) {
			UChar *p = room();

			if (e->flags & F_DEP)
				p = put_dep(p, dep_tag[e->slot]);
			blen = (UInt)(put_ref(p, arg[e->arg], e->size, e->kind) - buf);
			n_loads += e->kind & 1; /* K_L, K_M */
		} else {
			if (!roi_done)
				note_ref(arg[e->arg], e->size, e->kind);
			continue;
		}
		n_refs++;
		n_recs++;
	}
	ld_base = recording ? n_loads + MM_TAG0 : 0;
}

static VG_REGPARM(0) void mm_group(struct mm_group *g, Addr a0, Addr a1, Addr a2, Addr a3, Addr a4)
{
	Addr arg[MM_ARGS] = { a0, a1, a2, a3, a4 };
	UChar *p;

	if (!recording || clo_max) {
		mm_group_roi(g, arg);
		return;
	}
	p = room();
	for (UInt i = 0; i < g->n; i++) {
		const struct mm_ent *e = &g->e[i];

		if (e->kind == K_I) {
			p = put_ref(p, e->addr, e->size, K_I);
			n_insns++;
		} else {
			Addr a = arg[e->arg];

			if (e->flags & F_DEP)
				p = put_dep(p, dep_tag[e->slot]);
			p = put_ref(p, a, e->size, e->kind);
			n_loads += e->kind & 1; /* K_L, K_M: bit 0 */
		}
	}
	n_refs += g->n;
	n_recs += g->n;
	blen = (UInt)(p - buf);
	ld_base = n_loads + MM_TAG0;
}

/* ---------------------------------------------------------------- records */

static void put_name(UChar **pp, const HChar *s)
{
	UInt n = s ? (UInt)VG_(strlen)(s) : 0;

	if (n > 4096)
		n = 4096;
	*pp = put_v(*pp, n);
	if (n)
		VG_(memcpy)(*pp, s, n);
	*pp += n;
}

static void put_event(UInt kind, UInt prot, ULong flags, Long fd, ULong advice, Addr addr,
		      ULong len, Addr new_addr, ULong new_len)
{
	UChar *p = room();

	*p++ = T_EVENT;
	*p++ = (UChar)kind;
	p = put_v(p, prot);
	p = put_v(p, flags);
	p = put_v(p, ((ULong)fd << 1) ^ (ULong)(fd >> 63));
	p = put_v(p, advice);
	p = put_v(p, addr);
	p = put_v(p, len);
	p = put_v(p, new_addr);
	p = put_v(p, new_len);
	p = put_v(p, 0);
	blen = (UInt)(p - buf);
	n_recs++;
}

/*
 * /proc/self/maps of this process: Valgrind's mappings and the client's. Used
 * only for what aspacemgr does not keep: private or shared, and the kernel's
 * names ([vdso], [vvar]).
 */
static HChar *maps_text;

static void maps_read(void)
{
	SysRes r = VG_(open)("/proc/self/maps", VKI_O_RDONLY, 0);
	Int fd, n, len = 0, cap = 1 << 16;

	if (sr_isError(r))
		return;
	fd = (Int)sr_Res(r);
	maps_text = VG_(malloc)("mmusim.maps", (SizeT)cap + 1);
	while ((n = VG_(read)(fd, maps_text + len, cap - len)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			maps_text = VG_(realloc)("mmusim.maps", maps_text, (SizeT)cap + 1);
		}
	}
	maps_text[len] = 0;
	VG_(close)(fd);
}

/* The /proc/self/maps line covering @a: its 's'/'p' flag and its [name], if any. */
static void maps_find(Addr a, Bool *shared, const HChar **bracket, Int *blen_out)
{
	HChar *l = maps_text;

	*shared = False;
	*bracket = NULL;
	while (l && *l) {
		HChar *end = VG_(strchr)(l, '\n'), *q;
		Addr lo = (Addr)VG_(strtoull16)(l, &q), hi = 0;

		if (*q == '-')
			hi = (Addr)VG_(strtoull16)(q + 1, &q);
		if (a >= lo && a < hi) {
			HChar *b = VG_(strchr)(q, '[');

			*shared = q[4] == 's';
			if (b && (!end || b < end)) {
				HChar *c = VG_(strchr)(b, ']');

				*bracket = b;
				*blen_out = c ? (Int)(c - b + 1) : 1;
			}
			return;
		}
		l = end ? end + 1 : NULL;
	}
}

/* One MAP record: start, length, prot, flags, dev, ino, offset, name. */
static void put_map(Addr start, ULong len, UInt prot, ULong flags, ULong dev, ULong ino,
		    ULong off, const HChar *name, Int nlen)
{
	UChar *p = room();

	*p++ = T_MAP;
	p = put_v(p, start);
	p = put_v(p, len);
	p = put_v(p, prot);
	p = put_v(p, flags);
	p = put_v(p, dev);
	p = put_v(p, ino);
	p = put_v(p, off);
	if (nlen < 0)
		nlen = name ? (Int)VG_(strlen)(name) : 0;
	if (nlen > 4096)
		nlen = 4096;
	p = put_v(p, (ULong)nlen);
	if (nlen)
		VG_(memcpy)(p, name, (SizeT)nlen);
	p += nlen;
	blen = (UInt)(p - buf);
	n_recs++;
}

/* The client's mappings as the first instruction sees them (aspacemgr's segments). */
static void put_initial_maps(ThreadId tid)
{
	Int n = 0;
	Addr *st = VG_(get_segment_starts)(SkFileC | SkAnonC | SkShmC, &n);
	Addr sp = VG_(get_SP)(tid);

	maps_read();
	for (Int i = 0; i < n; i++) {
		NSegment const *s = VG_(am_find_nsegment)(st[i]);
		const HChar *name = NULL, *br = NULL;
		Int nl = -1, bl = 0;
		Bool shared;
		ULong flags;
		UInt prot;

		if (!s)
			continue;
		prot = (s->hasR ? 1 : 0) | (s->hasW ? 2 : 0) | (s->hasX ? 4 : 0);
		maps_find(s->start, &shared, &br, &bl);
		shared = shared || s->kind == SkShmC;
		flags = shared ? 0x01 : 0x02;
		if (s->kind == SkFileC) {
			name = VG_(am_get_filename)(s);
		} else {
			flags |= 0x20; /* MAP_ANONYMOUS */
			if (sp >= s->start && sp <= s->end)
				name = "[stack]", flags |= 0x20000 /* MAP_STACK */;
			else if (s->isCH || s->start == VG_(brk_base))
				name = "[heap]";
			else if (br)
				name = br, nl = bl;
		}
		put_map(s->start, s->end - s->start + 1, prot, flags, s->dev, s->ino,
			s->kind == SkFileC ? (ULong)s->offset : 0, name, nl);
	}
	if (st)
		VG_(free)(st);
	if (maps_text)
		VG_(free)(maps_text);
	maps_text = NULL;
}

static void put_u(UInt tag, ULong v)
{
	UChar *p = room();

	*p++ = (UChar)tag;
	p = put_v(p, v);
	blen = (UInt)(p - buf);
	n_recs++;
}

static void mm_start_client(ThreadId tid, ULong blocks)
{
	(void)blocks;
	if (!started) {
		started = True;
		put_initial_maps(tid);
	}
	if (tid != cur_tid) {
		cur_tid = tid;
		put_u(T_THREAD, tid);
	}
}

/* ---------------------------------------------------------------- ROI */

static Bool mm_client_request(ThreadId tid, UWord *arg, UWord *ret)
{
	(void)tid;
	if (!VG_IS_TOOL_USERREQ('M', 'M', arg[0]))
		return False;
	if (arg[0] == MMUSIM_USERREQ_ROI_BEGIN) {
		if (!recording) {
			pg_reset();
			put_u(T_ROI, n_seen);
		}
		roi_client = True;
		recording = True;
		clo_max = 0;
		ld_base = n_loads + MM_TAG0;
	} else if (arg[0] == MMUSIM_USERREQ_ROI_END) {
		roi_client = True;
		recording = False;
		clo_max = 0;
		ld_base = 0;
	} else {
		return False;
	}
	*ret = 0;
	return True;
}

/* ---------------------------------------------------------------- syscalls */

static HChar exec_path[4097]; /* the program of the execve() under way */

/* Copy the client's string at @a (at most 4096 bytes, readable ones only) into exec_path. */
static void exec_path_copy(Addr a)
{
	UInt n = 0;

	while (n < sizeof(exec_path) - 1) {
		if ((n == 0 || ((a + n) & 4095) == 0) &&
		    !VG_(am_is_valid_for_client)(a + n, 1, VKI_PROT_READ))
			break;
		if (!(exec_path[n] = *(const HChar *)(a + n)))
			break;
		n++;
	}
	exec_path[n] = 0;
}

/*
 * The traced process calls execve(): tell capture.c (MMSE), and hand the
 * descriptor to the Valgrind that the exec starts (see the header). What the
 * buffer holds stays: if the call fails, the image goes on.
 */
static void mm_pre_exec(UWord path)
{
	static HChar arg[40];
	XArray *va = VG_(args_for_valgrind);

	exec_path_copy(path);
	mm_note(WIRE_EXEC, exec_path[0] ? exec_path : "?");
	if (out_fd < 0 || !va)
		return;
	VG_(sprintf)(arg, "--out-fd=%d", out_fd);
	for (Word i = VG_(args_for_valgrind_noexecpass); i < VG_(sizeXA)(va); i++) {
		HChar **a = (HChar **)VG_(indexXA)(va, i);

		if (!VG_(strncmp)(*a, "--out-fd=", 9))
			*a = arg;
	}
	VG_(fcntl)(out_fd, VKI_F_SETFD, 0);
}

/* The execve() failed: the descriptor is ours again; say why when Valgrind refused it. */
static void mm_exec_failed(SysRes res)
{
	struct vg_stat sb;

	if (out_fd < 0)
		return;
	VG_(fcntl)(out_fd, VKI_F_SETFD, VKI_FD_CLOEXEC);
	mm_note(WIRE_EXEC, NULL);
	VG_(memset)(&sb, 0, sizeof(sb));
	if (sr_Err(res) == VKI_EACCES && !sr_isError(VG_(stat)(exec_path, &sb)) &&
	    (sb.mode & (VKI_S_ISUID | VKI_S_ISGID)))
		VG_(umsg)("mmusim: cannot trace %s: a set-user-ID or set-group-ID program does not "
			  "run under Valgrind\n", exec_path);
}

/*
 * Before every system call: flush, so that what the process did before the
 * call is in the pipe before anything the call lets another process do
 * (capture.c: the order across processes).
 */
static void mm_pre_syscall(ThreadId tid, UInt no, UWord *args, UInt nargs)
{
	(void)tid, (void)nargs;
	if (out_fd < 0)
		return;
	out_flush();
	if (no == __NR_execve)
		mm_pre_exec(args[0]);
}

/*
 * Valgrind gives tools no fstatfs(): the core's raw system call, which the tool
 * is linked with (libcoregrind; coregrind/pub_core_syscall.h declares it with
 * eight arguments, of which amd64 uses six).
 */
extern SysRes VG_(do_syscall)(UWord sysno, UWord, UWord, UWord, UWord, UWord, UWord, UWord, UWord);

/*
 * FILE: the identity behind @fd (device, inode, the mmap's offset, path), after
 * its mmap event; version 5: its filesystem's f_type (fstatfs(): TMPFS_MAGIC
 * for tmpfs and memfd, whose mappings are shmem) and the pages it holds now
 * (st_blocks / 8: 0 for a memfd or tmpfs file that is all holes).
 */
static void put_file(Long fd, ULong off)
{
	const HChar *name = NULL;
	struct vg_stat sb;
	struct vki_statfs sf;
	UChar *p;

	VG_(memset)(&sb, 0, sizeof(sb));
	VG_(memset)(&sf, 0, sizeof(sf));
	VG_(fstat)((Int)fd, &sb);
	if (sr_isError(VG_(do_syscall)(__NR_fstatfs, (UWord)fd, (UWord)&sf, 0, 0, 0, 0, 0, 0)))
		sf.f_type = 0;
	if (!VG_(resolve_filename)((Int)fd, &name))
		name = NULL;
	p = room();
	*p++ = T_FILE;
	p = put_v(p, sb.dev);
	p = put_v(p, sb.ino);
	p = put_v(p, off);
	put_name(&p, name);
	p = put_v(p, (ULong)(UInt)sf.f_type);
	p = put_v(p, sb.blocks / 8);
	blen = (UInt)(p - buf);
	n_recs++;
}

static void mm_post_syscall(ThreadId tid, UInt no, UWord *a, UInt nargs, SysRes res)
{
	UWord r;

	(void)tid, (void)nargs;
	if (no == __NR_execve && sr_isError(res))
		mm_exec_failed(res);
	/* Mapping calls are recorded also outside the region of interest: the replay needs them. */
	if (sr_isError(res) || out_fd < 0)
		return;
	r = sr_Res(res);
	if (!recording) {
		/* pages that the call unmaps or discards fault again at their next touch */
		if ((no == __NR_mmap && (a[3] & 0x10)) || no == __NR_munmap)
			pg_forget(no == __NR_mmap ? r : a[0], a[1]); /* MAP_FIXED replaces what was there */
		else if (no == __NR_mremap)
			pg_forget(a[0], a[1]);
		else if (no == __NR_madvise && (a[2] == 4 || a[2] == 8 || a[2] == 9))
			pg_forget(a[0], a[1]); /* MADV_DONTNEED, MADV_FREE, MADV_REMOVE */
	}
	switch (no) {
	case __NR_mmap:
		put_event(EV_MMAP, (UInt)a[2], a[3], (Long)(Int)a[4], 0, r, a[1], a[0], 0);
		if (!(a[3] & 0x20) && (Int)a[4] >= 0)
			put_file((Long)(Int)a[4], a[5]);
		break;
	case __NR_clone:
	case __NR_clone3:
	case __NR_fork:
	case __NR_vfork:
		/*
		 * The parent of a new process (the atfork handler ran: not a thread, and
		 * vfork is run as fork by Valgrind): its records so far, then the fork,
		 * before anything it does next.
		 */
		if (r && forked) {
			UInt child = (UInt)r;

			forked = False;
			out_flush();
			mm_note_n(WIRE_FORK, &child, 4);
		}
		break;
	case __NR_munmap:
		put_event(EV_MUNMAP, 0, 0, -1, 0, a[0], a[1], 0, 0);
		break;
	case __NR_mprotect:
		put_event(EV_MPROTECT, (UInt)a[2], 0, -1, 0, a[0], a[1], 0, 0);
		break;
	case __NR_madvise:
		put_event(EV_MADVISE, 0, 0, -1, a[2], a[0], a[1], 0, 0);
		break;
	case __NR_brk:
		put_event(EV_BRK, 0, 0, -1, 0, r, 0, 0, 0);
		break;
	case __NR_mremap:
		put_event(EV_MREMAP, 0, a[3], -1, 0, a[0], a[1], r, a[2]);
		break;
	/* the mlock family (mtr version 5): they populate and pin memory */
	case __NR_mlock:
		put_event(EV_MLOCK, 0, 0, -1, 0, a[0], a[1], 0, 0);
		break;
	case __NR_mlock2: /* (Valgrind 3.19 has no wrapper: the call fails there) */
		put_event(EV_MLOCK, 0, a[2], -1, 0, a[0], a[1], 0, 0);
		break;
	case __NR_munlock:
		put_event(EV_MUNLOCK, 0, 0, -1, 0, a[0], a[1], 0, 0);
		break;
	case __NR_mlockall:
		put_event(EV_MLOCKALL, 0, a[0], -1, 0, 0, 0, 0, 0);
		break;
	case __NR_munlockall:
		put_event(EV_MUNLOCKALL, 0, 0, -1, 0, 0, 0, 0, 0);
		break;
	case __NR_prctl:
		if (a[0] == PR_SET_THP_DISABLE) /* (mtr version 6) */
			put_event(EV_PRCTL, 0, 0, -1, a[0], a[1], 0, 0, 0);
		break;
	case __NR_getppid:
		/* A marker the program sets between steps (tests/native/): in order with the refs. */
		put_u(T_MARKER, no);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- fork */

/* After a fork, in both processes: every private page is write-protected (copy-on-write). */
static void pg_fork(void)
{
	for (UWord i = 0; i < pg_cap; i++)
		pg_st[i] &= (UChar)~PG_WRITTEN;
	memo_vpn[0] = memo_vpn[1] = ~0UL;
}

static void mm_fork_parent(ThreadId tid)
{
	(void)tid;
	forked = True;
	pg_fork();
}

/*
 * A forked child: a process of its own, traced on (see "Fork" in the header).
 * The parent flushed before the call; whatever a thread buffered since is the
 * parent's to write, and dropped here.
 */
static void mm_fork_child(ThreadId tid)
{
	my_pid = (UInt)VG_(getpid)();
	forked = False;
	blen = 0;
	expect[0] = expect[1] = 0;
	touch_vpn = 0;
	pg_fork();
	n_insns = n_refs = n_recs = n_flushed = 0;
	loads0 = n_loads; /* a dependence on the parent's loads is not in this stream */
	started = True;
	cur_tid = tid;
	put_u(T_THREAD, tid);
}

/* ---------------------------------------------------------------- instrumentation */

struct ev {
	IRExpr *addr; /* data: the address atom; NULL for a fetch */
	IRExpr *tag;  /* data: the address's tag (an I64 atom), NULL if it has none */
	Addr iaddr;
	UInt size, kind, flags;
};

struct inst {
	IRSB *sb;
	struct ev ev[MM_GROUP];
	UInt n, ndata;
	/* dependences: the shadow of each temporary of the input (NULL: no tag) */
	IRExpr **sh;
	UInt nsh;
	UChar *need;  /* per temporary of the input: its tag is used (sh_need()) */
	Int gs;       /* the guest state's size: its first shadow area starts there */
	IRTemp base;  /* this group's ld_base, once a load needs it */
	UInt k;       /* loads (and modifies) of this group so far */
	/* each general-purpose register's tag as this superblock left it, if known (reg_known) */
	IRExpr *reg[16];
	Bool reg_known[16];
};

/* ---- shadow values: IR that computes, next to each value, its tag (header) */

#define GPR_LO ((Int)__builtin_offsetof(VexGuestAMD64State, guest_RAX))
#define GPR_HI ((Int)__builtin_offsetof(VexGuestAMD64State, guest_R15) + 8)

/* A new I64 (or @ty) temporary holding @e, appended to the output. */
static IRExpr *sh_emit(struct inst *s, IRType ty, IRExpr *e)
{
	IRTemp t = newIRTemp(s->sb->tyenv, ty);

	addStmtToIRSB(s->sb, IRStmt_WrTmp(t, e));
	return IRExpr_RdTmp(t);
}

static inline IRExpr *sh_u64(ULong v)
{
	return IRExpr_Const(IRConst_U64(v));
}

/* The tag of atom @a: NULL for a constant or an untagged temporary. */
static IRExpr *sh_atom(struct inst *s, IRExpr *a)
{
	if (a && a->tag == Iex_RdTmp && a->Iex.RdTmp.tmp < s->nsh)
		return s->sh[a->Iex.RdTmp.tmp];
	return NULL;
}

/* The same tag: both none, or the same temporary. */
static Bool sh_same(const IRExpr *a, const IRExpr *b)
{
	return a == b || (a && b && a->tag == Iex_RdTmp && b->tag == Iex_RdTmp &&
			  a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp);
}

/* The most recent of two tags (the larger: tags grow with the loads). */
static IRExpr *sh_max(struct inst *s, IRExpr *a, IRExpr *b)
{
	IRExpr *lt;

	if (!a || !b || sh_same(a, b))
		return a ? a : b;
	lt = sh_emit(s, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, a, b));
	return sh_emit(s, Ity_I64, IRExpr_ITE(lt, b, a));
}

/* A general-purpose register's shadow slot (the 8 bytes holding guest offset @off), or -1. */
static Int sh_gpr(struct inst *s, Int off)
{
	return off >= GPR_LO && off < GPR_HI ? s->gs + (off & ~7) : -1;
}

/*
 * The tag of the register at shadow slot @o: what this superblock last put
 * there or read from there (no IR), else a GET of the slot. Only this code
 * writes the shadow area, and never while a superblock runs, so what the
 * superblock put is what is there.
 */
static IRExpr *sh_reg_get(struct inst *s, Int o)
{
	Int r = (o - s->gs - GPR_LO) >> 3;

	if (!s->reg_known[r]) {
		s->reg[r] = sh_emit(s, Ity_I64, IRExpr_Get(o, Ity_I64));
		s->reg_known[r] = True;
	}
	return s->reg[r];
}

/* PUT tag @t (NULL: none) into the register's shadow slot @o, unless it holds it already. */
static void sh_reg_put(struct inst *s, Int o, IRExpr *t)
{
	Int r = (o - s->gs - GPR_LO) >> 3;

	if (s->reg_known[r] && sh_same(s->reg[r], t))
		return;
	addStmtToIRSB(s->sb, IRStmt_Put(o, t ? t : sh_u64(0)));
	s->reg[r] = t;
	s->reg_known[r] = True;
}

/* The tag of the group's k-th load: ld_base + k (ld_base read once per group). */
static IRExpr *sh_own(struct inst *s)
{
	if (s->base == IRTemp_INVALID) {
		s->base = newIRTemp(s->sb->tyenv, Ity_I64);
		addStmtToIRSB(s->sb, IRStmt_WrTmp(s->base, IRExpr_Load(Iend_LE, Ity_I64,
								      mkIRExpr_HWord((HWord)&ld_base))));
	}
	return sh_emit(s, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(s->base), sh_u64(s->k)));
}

/* The tag of the value an 8-byte load at @a brings, its own tag being @own (mm_sh_load()). */
static IRExpr *sh_loaded(struct inst *s, IRExpr *a, IRExpr *own)
{
	IRTemp t = newIRTemp(s->sb->tyenv, Ity_I64);

	addStmtToIRSB(s->sb, IRStmt_Dirty(unsafeIRDirty_1_N(t, 2, "mm_sh_load",
							    VG_(fnptr_to_fnentry)(mm_sh_load),
							    mkIRExprVec_2(own, a))));
	return IRExpr_RdTmp(t);
}

/* An 8-byte store at @a of a value with tag @tag: the word's tag (mm_sh_store()). */
static void sh_store(struct inst *s, IRExpr *a, IRExpr *tag)
{
	addStmtToIRSB(s->sb, IRStmt_Dirty(unsafeIRDirty_0_N(2, "mm_sh_store",
							    VG_(fnptr_to_fnentry)(mm_sh_store),
							    mkIRExprVec_2(a, tag))));
}

/* The tag of expression @e (the right side of a WrTmp; loads apart). */
static IRExpr *sh_expr(struct inst *s, IRExpr *e)
{
	Int o;

	switch (e->tag) {
	case Iex_Get:
		o = sh_gpr(s, e->Iex.Get.offset);
		return o < 0 ? NULL : sh_reg_get(s, o);
	case Iex_RdTmp:
		return sh_atom(s, e);
	case Iex_Unop:
		return sh_atom(s, e->Iex.Unop.arg);
	case Iex_Binop:
		return sh_max(s, sh_atom(s, e->Iex.Binop.arg1), sh_atom(s, e->Iex.Binop.arg2));
	case Iex_Triop:
		return sh_max(s, sh_max(s, sh_atom(s, e->Iex.Triop.details->arg1),
					sh_atom(s, e->Iex.Triop.details->arg2)),
			      sh_atom(s, e->Iex.Triop.details->arg3));
	case Iex_Qop:
		return sh_max(s, sh_max(s, sh_atom(s, e->Iex.Qop.details->arg1),
					sh_atom(s, e->Iex.Qop.details->arg2)),
			      sh_max(s, sh_atom(s, e->Iex.Qop.details->arg3),
				     sh_atom(s, e->Iex.Qop.details->arg4)));
	case Iex_ITE: /* the value selected; the condition selects, it is not the address */
		return sh_max(s, sh_atom(s, e->Iex.ITE.iftrue), sh_atom(s, e->Iex.ITE.iffalse));
	default: /* constants, GetI (x87), CCall (flags and conditions): no tag */
		return NULL;
	}
}

/* A PUT of a value with tag @tag at guest offset @off, @size bytes. */
static void sh_put(struct inst *s, Int off, UInt size, IRExpr *tag)
{
	Int o = sh_gpr(s, off);

	if (o < 0)
		return;
	if (size < 8) { /* a part of the register: the rest keeps its value, and its tag */
		if (!tag)
			return;
		tag = sh_max(s, sh_reg_get(s, o), tag);
	}
	sh_reg_put(s, o, tag);
}

static void need_atom(struct inst *s, const IRExpr *a)
{
	if (a && a->tag == Iex_RdTmp && a->Iex.RdTmp.tmp < s->nsh)
		s->need[a->Iex.RdTmp.tmp] = 1;
}

/*
 * Which temporaries' tags are used, by a backward pass over the superblock:
 * a tag is used if the value goes into a general-purpose register, is stored
 * as a word, or is an address; and so are the tags of what a used one is
 * computed from. Only used tags get IR (the flags' inputs, a return address
 * and the like get none), which halves the translation work the tags add.
 */
static void sh_need(struct inst *s, IRSB *in)
{
	VG_(memset)(s->need, 0, s->nsh);
	for (Int i = in->stmts_used - 1; i >= 0; i--) {
		const IRStmt *st = in->stmts[i];
		const IRExpr *e;

		switch (st->tag) {
		case Ist_Put:
			if (sh_gpr(s, st->Ist.Put.offset) >= 0)
				need_atom(s, st->Ist.Put.data);
			break;
		case Ist_Store:
			need_atom(s, st->Ist.Store.addr);
			need_atom(s, st->Ist.Store.data);
			break;
		case Ist_StoreG:
			need_atom(s, st->Ist.StoreG.details->addr);
			break;
		case Ist_LoadG:
			need_atom(s, st->Ist.LoadG.details->addr);
			if (st->Ist.LoadG.details->dst < s->nsh && s->need[st->Ist.LoadG.details->dst])
				need_atom(s, st->Ist.LoadG.details->alt);
			break;
		case Ist_CAS:
			need_atom(s, st->Ist.CAS.details->addr);
			break;
		case Ist_LLSC:
			need_atom(s, st->Ist.LLSC.addr);
			break;
		case Ist_Dirty:
			if (st->Ist.Dirty.details->mFx != Ifx_None)
				need_atom(s, st->Ist.Dirty.details->mAddr);
			break;
		case Ist_WrTmp:
			e = st->Ist.WrTmp.data;
			if (e->tag == Iex_Load) {
				need_atom(s, e->Iex.Load.addr);
				break;
			}
			if (st->Ist.WrTmp.tmp >= s->nsh || !s->need[st->Ist.WrTmp.tmp])
				break;
			switch (e->tag) {
			case Iex_RdTmp:
				need_atom(s, e);
				break;
			case Iex_Unop:
				need_atom(s, e->Iex.Unop.arg);
				break;
			case Iex_Binop:
				need_atom(s, e->Iex.Binop.arg1);
				need_atom(s, e->Iex.Binop.arg2);
				break;
			case Iex_Triop:
				need_atom(s, e->Iex.Triop.details->arg1);
				need_atom(s, e->Iex.Triop.details->arg2);
				need_atom(s, e->Iex.Triop.details->arg3);
				break;
			case Iex_Qop:
				need_atom(s, e->Iex.Qop.details->arg1);
				need_atom(s, e->Iex.Qop.details->arg2);
				need_atom(s, e->Iex.Qop.details->arg3);
				need_atom(s, e->Iex.Qop.details->arg4);
				break;
			case Iex_ITE:
				need_atom(s, e->Iex.ITE.iftrue);
				need_atom(s, e->Iex.ITE.iffalse);
				break;
			default:
				break;
			}
			break;
		default:
			break;
		}
	}
}

/* The shadow of statement @st, appended after it (inst_stmt() has recorded its references). */
static void sh_stmt(struct inst *s, IRSB *in, IRStmt *st)
{
	IRExpr *t = NULL;
	IRTemp dst = IRTemp_INVALID;

	switch (st->tag) {
	case Ist_WrTmp: {
		IRExpr *e = st->Ist.WrTmp.data;

		dst = st->Ist.WrTmp.tmp;
		if (dst >= s->nsh || !s->need[dst])
			return; /* a tag nothing uses */
		if (e->tag == Iex_Load) {
			t = sh_own(s);
			if (e->Iex.Load.ty == Ity_I64)
				t = sh_loaded(s, e->Iex.Load.addr, t);
		} else {
			t = sh_expr(s, e);
		}
		break;
	}
	case Ist_Put:
		sh_put(s, st->Ist.Put.offset,
		       sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Put.data)),
		       sh_atom(s, st->Ist.Put.data));
		return;
	case Ist_Store:
		if (typeOfIRExpr(in->tyenv, st->Ist.Store.data) == Ity_I64 && sh_atom(s, st->Ist.Store.data))
			sh_store(s, st->Ist.Store.addr, sh_atom(s, st->Ist.Store.data));
		return;
	case Ist_CAS:
		dst = st->Ist.CAS.details->oldLo;
		if (dst < s->nsh && s->need[dst])
			t = sh_own(s);
		break;
	case Ist_LLSC:
		if (!st->Ist.LLSC.storedata && st->Ist.LLSC.result < s->nsh &&
		    s->need[st->Ist.LLSC.result]) {
			dst = st->Ist.LLSC.result;
			t = sh_own(s);
		}
		break;
	case Ist_Dirty: {
		IRDirty *d = st->Ist.Dirty.details;

		dst = d->tmp; /* a helper's result: no tag */
		for (Int i = 0; i < d->nFxState; i++) {
			if (d->fxState[i].fx == Ifx_Read)
				continue;
			for (Int r = 0; r <= d->fxState[i].nRepeats; r++) {
				Int lo = d->fxState[i].offset + r * d->fxState[i].repeatLen;

				for (Int o = lo & ~7; o < lo + d->fxState[i].size; o += 8)
					if (sh_gpr(s, o) >= 0)
						sh_reg_put(s, sh_gpr(s, o), NULL);
			}
		}
		break;
	}
	default:
		return;
	}
	if (dst != IRTemp_INVALID && dst < s->nsh)
		s->sh[dst] = t;
}

/* ---- the reference groups */

static void grp_flush(struct inst *s)
{
	struct mm_group *g;
	IRExpr *args[MM_ARGS + 1];
	IRDirty *d;
	UInt k = 0, nslot = 0;
	IRExpr *slot[MM_ARGS];

	s->base = IRTemp_INVALID; /* the next group reads ld_base afresh */
	s->k = 0;
	if (!s->n)
		return;
	g = VG_(malloc)("mmusim.group", sizeof(*g) + s->n * sizeof(struct mm_ent));
	g->n = s->n;
	for (UInt i = 0; i < MM_ARGS; i++)
		args[i + 1] = mkIRExpr_HWord(0);
	for (UInt i = 0; i < s->n; i++) {
		struct mm_ent *e = &g->e[i];

		e->size = (UShort)s->ev[i].size;
		e->kind = (UChar)s->ev[i].kind;
		e->addr = s->ev[i].iaddr;
		e->arg = 0;
		e->slot = 0;
		e->flags = (UChar)s->ev[i].flags;
		if (s->ev[i].addr) {
			e->arg = (UChar)k;
			if (s->ev[i].tag) {
				UInt j = 0;

				while (j < nslot && !sh_same(slot[j], s->ev[i].tag))
					j++;
				if (j == nslot) {
					slot[nslot++] = s->ev[i].tag;
					addStmtToIRSB(s->sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&dep_tag[j]),
									  s->ev[i].tag));
				}
				e->flags |= F_DEP;
				e->slot = (UChar)j;
			}
			args[++k] = s->ev[i].addr;
		}
	}
	args[0] = mkIRExpr_HWord((HWord)g);
	d = unsafeIRDirty_0_N(0, "mm_group", VG_(fnptr_to_fnentry)(mm_group),
			      mkIRExprVec_6(args[0], args[1], args[2], args[3], args[4], args[5]));
	addStmtToIRSB(s->sb, IRStmt_Dirty(d));
	s->n = s->ndata = 0;
}

static void add_ifetch(struct inst *s, Addr a, UInt len)
{
	if (s->n == MM_GROUP)
		grp_flush(s);
	s->ev[s->n++] = (struct ev){ .addr = NULL, .iaddr = a, .size = len ? len : 1, .kind = K_I };
}

static void add_data(struct inst *s, IRExpr *a, UInt size, UInt kind)
{
	struct ev *last = s->n ? &s->ev[s->n - 1] : NULL;

	tl_assert(isIRAtom(a));
	if (kind == K_S && last && last->kind == K_L && last->addr && last->size == size &&
	    eqIRAtom(last->addr, a)) {
		last->kind = K_M;
		return;
	}
	if (s->n == MM_GROUP || s->ndata == MM_ARGS)
		grp_flush(s);
	s->ev[s->n++] = (struct ev){ .addr = a, .tag = sh_atom(s, a), .iaddr = 0, .size = size,
				     .kind = kind };
	s->ndata++;
	s->k += kind == K_L; /* this load's index in the group (sh_own()) */
}

/* A guarded reference: a call of its own, made only when @guard holds. */
static void add_guarded(struct inst *s, IRExpr *a, UInt size, UInt kind, IRExpr *guard)
{
	struct mm_group *g;
	IRDirty *d;
	IRExpr *tag = sh_atom(s, a);

	grp_flush(s);
	g = VG_(malloc)("mmusim.group", sizeof(*g) + sizeof(struct mm_ent));
	g->n = 1;
	g->e[0] = (struct mm_ent){ .addr = 0, .size = (UShort)size, .kind = (UChar)kind, .arg = 0,
				   .flags = tag ? F_DEP : 0, .slot = 0 };
	if (tag)
		addStmtToIRSB(s->sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&dep_tag[0]), tag));
	d = unsafeIRDirty_0_N(0, "mm_group", VG_(fnptr_to_fnentry)(mm_group),
			      mkIRExprVec_6(mkIRExpr_HWord((HWord)g), a, mkIRExpr_HWord(0),
					    mkIRExpr_HWord(0), mkIRExpr_HWord(0), mkIRExpr_HWord(0)));
	d->guard = guard;
	addStmtToIRSB(s->sb, IRStmt_Dirty(d));
}

static UInt load_size(IRLoadGOp cvt, IRType ty)
{
	switch (cvt) {
	case ILGop_IdentV128: return 16;
	case ILGop_Ident64: return 8;
	case ILGop_Ident32: return 4;
	case ILGop_16Uto32: case ILGop_16Sto32: return 2;
	case ILGop_8Uto32: case ILGop_8Sto32: return 1;
	default: return sizeofIRType(ty);
	}
}

/*
 * A guarded load (its own call, after which the next group reads ld_base
 * afresh): its result's tag is ld_base + 1 if it loads, else @alt's. Read
 * before the call, which moves ld_base when it runs.
 */
static void add_loadg(struct inst *s, IRLoadG *lg, UInt size)
{
	IRExpr *own, *alt = sh_atom(s, lg->alt);

	grp_flush(s);
	s->k = 1;
	own = sh_own(s);
	add_guarded(s, lg->addr, size, K_L, lg->guard);
	if (lg->dst < s->nsh)
		s->sh[lg->dst] = sh_emit(s, Ity_I64, IRExpr_ITE(lg->guard, own, alt ? alt : sh_u64(0)));
	s->base = IRTemp_INVALID;
	s->k = 0;
}

static void inst_stmt(struct inst *s, IRSB *in, IRStmt *st)
{
	switch (st->tag) {
	case Ist_IMark:
		add_ifetch(s, (Addr)st->Ist.IMark.addr, st->Ist.IMark.len);
		break;
	case Ist_WrTmp:
		if (st->Ist.WrTmp.data->tag == Iex_Load)
			add_data(s, st->Ist.WrTmp.data->Iex.Load.addr,
				 sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty), K_L);
		break;
	case Ist_Store:
		add_data(s, st->Ist.Store.addr,
			 sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data)), K_S);
		break;
	case Ist_StoreG: {
		IRStoreG *sg = st->Ist.StoreG.details;

		add_guarded(s, sg->addr, sizeofIRType(typeOfIRExpr(in->tyenv, sg->data)), K_S,
			    sg->guard);
		break;
	}
	case Ist_LoadG: {
		IRLoadG *lg = st->Ist.LoadG.details;
		IRType ty = typeOfIRTemp(in->tyenv, lg->dst);

		add_loadg(s, lg, load_size(lg->cvt, ty));
		break;
	}
	case Ist_Dirty: {
		IRDirty *d = st->Ist.Dirty.details;

		if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
			add_data(s, d->mAddr, (UInt)d->mSize, K_L);
		if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
			add_data(s, d->mAddr, (UInt)d->mSize, K_S);
		break;
	}
	case Ist_CAS: {
		IRCAS *c = st->Ist.CAS.details;
		UInt sz = sizeofIRType(typeOfIRExpr(in->tyenv, c->dataLo));

		if (c->dataHi)
			sz *= 2;
		add_data(s, c->addr, sz, K_L);
		add_data(s, c->addr, sz, K_S);
		break;
	}
	case Ist_LLSC:
		if (!st->Ist.LLSC.storedata)
			add_data(s, st->Ist.LLSC.addr,
				 sizeofIRType(typeOfIRTemp(in->tyenv, st->Ist.LLSC.result)), K_L);
		else
			add_data(s, st->Ist.LLSC.addr,
				 sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata)),
				 K_S);
		break;
	case Ist_Exit:
		grp_flush(s);
		break;
	default:
		break;
	}
}

static IRSB *mm_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			   const VexGuestExtents *vge, const VexArchInfo *archinfo,
			   IRType gWordTy, IRType hWordTy)
{
	static struct inst s;
	IRSB *out;
	Int i = 0;

	(void)closure, (void)vge, (void)archinfo;
	if (gWordTy != hWordTy)
		VG_(tool_panic)("host/guest word size mismatch");
	out = deepCopyIRSBExceptStmts(in);
	while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark)
		addStmtToIRSB(out, in->stmts[i++]);
	s.sb = out;
	s.n = s.ndata = 0;
	s.gs = layout->total_sizeB;
	s.base = IRTemp_INVALID;
	s.k = 0;
	VG_(memset)(s.reg_known, 0, sizeof(s.reg_known));
	if (s.nsh < (UInt)in->tyenv->types_used) {
		if (s.sh) {
			VG_(free)(s.sh);
			VG_(free)(s.need);
		}
		s.nsh = (UInt)in->tyenv->types_used * 2;
		s.sh = VG_(malloc)("mmusim.shadow", s.nsh * sizeof(*s.sh));
		s.need = VG_(malloc)("mmusim.shadow", s.nsh);
	}
	VG_(memset)(s.sh, 0, s.nsh * sizeof(*s.sh));
	sh_need(&s, in);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		if (!st || st->tag == Ist_NoOp)
			continue;
		inst_stmt(&s, in, st);
		addStmtToIRSB(out, st);
		sh_stmt(&s, in, st);
	}
	grp_flush(&s);
	return out;
}

/* ---------------------------------------------------------------- setup */

static Bool mm_option(const HChar *arg)
{
	if VG_INT_CLO(arg, "--out-fd", clo_fd) {}
	else if VG_INT_CLO(arg, "--skip-insns", clo_skip) {}
	else if VG_INT_CLO(arg, "--max-insns", clo_max) {}
	else if VG_BOOL_CLO(arg, "--roi", clo_roi) {}
	else
		return False;
	return True;
}

static void mm_usage(void)
{
	VG_(printf)("    --out-fd=N         write the framed mtr stream to descriptor N\n"
		    "    --skip-insns=N     start recording after N instructions [0]\n"
		    "    --max-insns=N      stop recording after N instructions [0: no limit]\n"
		    "    --roi=yes|no       record only between MMUSIM_ROI_BEGIN() and END() [no]\n");
}

static void mm_debug_usage(void)
{
}

static void mm_post_clo_init(void)
{
	if (clo_fd < 0 || clo_skip < 0 || clo_max < 0)
		VG_(fmsg_bad_option)("--out-fd", "mmusim needs --out-fd=N (and counts >= 0)\n");
	out_fd = VG_(safe_fd)((Int)clo_fd);
	my_pid = (UInt)VG_(getpid)();
	mm_note(WIRE_IMAGE, VG_(args_the_exename));
	buf = VG_(malloc)("mmusim.buf", MM_BUF);
	blen = 0;
	recording = clo_skip == 0 && !clo_roi;
	roi_client = clo_roi;
	ld_base = recording ? MM_TAG0 : 0;
	sm_prim = VG_(am_shadow_alloc)(sizeof(*sm_prim) << SM_PRIM); /* zero pages until used */
	if (!sm_prim)
		VG_(tool_panic)("mmusim: no room for the shadow memory's primary maps");
	VG_(atfork)(NULL, mm_fork_parent, mm_fork_child);
}

/* The process (or this image of it) ends: its last records, then WIRE_EXIT. */
static void mm_fini(Int exitcode)
{
	(void)exitcode;
	out_flush();
	mm_note(WIRE_EXIT, NULL);
}

static void mm_pre_clo_init(void)
{
	VG_(details_name)("mmusim");
	VG_(details_version)(NULL);
	VG_(details_description)("mmusim's memory trace recorder (mtr version 6)");
	VG_(details_copyright_author)("mmusim authors");
	VG_(details_bug_reports_to)("the mmusim repository");
	VG_(details_avg_translation_sizeB)(275);
	VG_(basic_tool_funcs)(mm_post_clo_init, mm_instrument, mm_fini);
	VG_(needs_command_line_options)(mm_option, mm_usage, mm_debug_usage);
	VG_(needs_syscall_wrapper)(mm_pre_syscall, mm_post_syscall);
	VG_(needs_client_requests)(mm_client_request);
	VG_(track_start_client_code)(mm_start_client);
}

VG_DETERMINE_INTERFACE_VERSION(mm_pre_clo_init)
