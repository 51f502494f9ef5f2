/*
 * trace_mtr.c - mmusim's native trace format "mtr": reader and writer.
 *
 * A compact binary record stream (byte-exact specification in traces/README.md):
 *   header   "\x89MTR\r\n\x1a\n", u16 version (1 to 5), u16 flags (0; version 4+: bit 0,
 *            "dependences recorded"), u32 reserved (0)
 *   ref      tag = form << 6 | size << 2 | kind   (form 0..2, size 0..15, kind I/L/S/M)
 *            [varint size, when the tag's size is 0]
 *            form 0: nothing; the address is the stream's predicted address
 *            form 1: zigzag varint of (address - predicted)
 *            form 2: the address, 7 bytes little-endian
 *   control  0xc0 END varint(number of records); 0xc1 EVENT (kind + 9 fields);
 *            0xc2 INSNS varint(count)
 *   version 2 (mmusim's Valgrind tool, capture/mm_main.c): 0xc3 MAP (an initial
 *            mapping), 0xc4 THREAD, 0xc5 FILE (after an mmap EVENT: the file),
 *            0xc6 FORK, 0xc7 ROI. They add no record to a batch: the mappings
 *            and files go to the reader's tables (trace.h), the rest to counters.
 *            0xc8 MARKER varint(system call number): a marker the program set
 *            (getppid()); it becomes an EV_MARKER event in the batch, in order.
 *   version 3 (the same tool since it records the memory a region of interest
 *            starts from): version 2 and 0xc9 TOUCH u8 how, zigzag varint of
 *            (page number - previous TOUCH's page number - 1): a 4 KiB page the
 *            program touched while nothing was recorded (before the region, in
 *            a pause), in the order the kernel saw it (enum touch_how: its first
 *            touch; a store to a page first read is a second TOUCH). It becomes
 *            an R_TOUCH record (addr: the page, size: how), in order with the
 *            events. A version 2 reader rejects version 3 by its header.
 *   version 4 (the same tool since it records dependences): version 3, the
 *            header flag MTR_FLAG_DEPS (the stream records every dependence:
 *            a reference without a DEP before it is independent) and 0xca DEP
 *            varint(d >= 1): the address of the reference that follows (the
 *            next record must be one) depends on the value of the d-th most
 *            recent load or modify record before it. It becomes an R_DEP record
 *            (size d), right before that reference's; the header's flag sets
 *            trace_reader.deps. A DEP without the flag, with d = 0, with d over
 *            the loads read so far or not followed by a reference is corrupt
 *            ("bad dependence"). A version 3 reader refuses version 4 by its
 *            header.
 *   version 5 (the same tool since it records mlock calls): version 4 and
 *            EVENT kinds 7 to 10: mlock (mlock() and mlock2(); flags: MLOCK_ONFAULT),
 *            munlock, mlockall (flags: MCL_*), munlockall (enum ev_kind; 6, the
 *            marker, is never an EVENT); and a FILE record ends with two more
 *            varints: the filesystem's statfs f_type (TMPFS_MAGIC for tmpfs and
 *            memfd; 0 unknown) and the pages the file had at the mmap (st_blocks
 *            / 8), which an mmap event carries (os_event.fs_magic, fs_pages).
 *            A version 4 reader refuses version 5 by its header; a version 1 to
 *            4 stream with such a kind is corrupt.
 *            The writer writes version 1, or version 2 with the mappings and
 *            files of a version 2 source, version 3 for a version 3 source,
 *            version 4 (with the flag) for a source that records dependences
 *            (a version 4 trace with the flag, a built-in workload) or any
 *            version 4 source, version 5 for a version 5 source (mtr_write_all());
 *            an mlock event for a writer below version 5 is an error.
 *   version 6 (the same tool since it follows fork; the process events of
 *            trace.h): version 5 and EVENT kinds 11 to 15: fork (addr: the
 *            child's id), switch (addr: the id whose records follow), exit,
 *            exec, prctl (advice: the option, PR_SET_THP_DISABLE; addr: its
 *            argument). The records before the first switch are process 0's.
 *            Each process has its own decoding state: its predicted addresses,
 *            its previous TOUCH page, its load count (a DEP counts back over
 *            its own loads) and its thread; a switch saves the current one's
 *            and restores the other's; a forked process starts from zeros
 *            (predicted addresses 0, thread 0), and so does a process after
 *            its exec. MAP records right after an exec are the new image's
 *            mappings: they become initial events in order (and join the
 *            mapping table with their image's number). Corrupt: a process
 *            event below version 6, a switch to the current process or to one
 *            that exited, a fork of an id seen before, any record of a process
 *            after its exit but a switch (each "at byte N (record R)").
 *            The writer keeps the same state per process.
 * The predicted address of a stream (instruction fetches; data references) is
 * the previous reference's address plus its size, so straight-line code costs
 * one byte per fetch (the validation trace averages 2.0 bytes per reference).
 * A reference of size <= 15 below 2^56 never takes more than 8 bytes: form 1
 * is used while its varint has at most 7 bytes, form 2 (1 + 7) otherwise.
 *
 * The END marker carries the record count, so a file cut anywhere (also
 * between records) is "truncated", and nothing may follow it. Compression is
 * left to zstd/gzip/xz around the whole stream (trace_io.c reads it; the
 * writer picks it from the path's suffix at each library's default level and
 * compresses through zout.c).
 *
 * Decoding: mtr_fast() takes every reference with an inline size without
 * bounds checks while at least MTR_MAXREC bytes remain in the buffer (one
 * test per stretch of records, not per byte); control records, explicit
 * sizes and the last bytes of the stream go through mtr_decode(), which
 * checks every byte. Left out: an index for seeking, and per-thread streams
 * (the records are one ordered stream, as lackey's).
 *
 * Sources: the varint and zigzag encodings are those of Protocol Buffers
 * (protobuf.dev, "Encoding"); the magic's layout follows PNG's signature
 * (RFC 2083 12.11: a high-bit byte, CR LF, ^Z, LF to catch text-mode damage).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"
#include "trace_io.h"
#include "zout.h"

#define MTR_VERSION 1     /* what the writer writes */
#define MTR_VERSION_MAX 6 /* what the reader reads */
#define MTR_FLAG_DEPS 0x1 /* version 4's header flag: dependences recorded (DEP records) */
#define MTR_HEADER 16
/*
 * Longest record the reader carries over between chunks: version 2's mmap
 * event with its FILE record (92 + 1 + 3 varints + a path of at most
 * MTR_PATH_MAX bytes and its length, + 2 varints in version 5: 4241 bytes) or
 * a MAP record (1 + 8 varints + path).
 * Must not exceed TIO_HEADROOM.
 */
#define MTR_PATH_MAX 4096
#define MTR_MAXREC 4352
#define MTR_SIZE_MAX 65536u
#define MTR_FORM_ABS_LIMIT (1ULL << 56)

enum {
	MTR_FORM_PRED = 0,
	MTR_FORM_DELTA = 1,
	MTR_FORM_ABS = 2,
	MTR_TAG_END = 0xc0,
	MTR_TAG_EVENT = 0xc1,
	MTR_TAG_INSNS = 0xc2,
	/* version 2 */
	MTR_TAG_MAP = 0xc3,
	MTR_TAG_THREAD = 0xc4,
	MTR_TAG_FILE = 0xc5,
	MTR_TAG_FORK = 0xc6,
	MTR_TAG_ROI = 0xc7,
	MTR_TAG_MARKER = 0xc8,
	/* version 3 */
	MTR_TAG_TOUCH = 0xc9,
	/* version 4 */
	MTR_TAG_DEP = 0xca,
};

static const unsigned char mtr_magic[8] = { 0x89, 'M', 'T', 'R', '\r', '\n', 0x1a, '\n' };

bool trace_mtr_probe(const unsigned char *p, size_t n)
{
	return n >= sizeof(mtr_magic) && !memcmp(p, mtr_magic, sizeof(mtr_magic));
}

static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ -(v & 1);
}

/* ---------------------------------------------------------------- reader */

/* One process's decoding state (version 6). */
struct mtr_proc {
	uint64_t id;
	vaddr_t expect[2];
	uint64_t touch_vpn, loads;
	uint32_t thread;
	uint32_t image; /* its image (0, or the number of its last exec in the file) */
	bool exited;
};

/*
 * The table of process ids (reader and writer): open addressing on the id,
 * 1 + the index into the array in each slot. Memory grows with the processes.
 */
struct proc_table {
	struct mtr_proc *procs;
	size_t n, cap;
	uint32_t *slot;
	size_t nslot;
};

static size_t proc_hash(uint64_t id, size_t nslot)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 17) & (nslot - 1);
}

/* The index of process @id, or -1. */
static long proc_find(const struct proc_table *t, uint64_t id)
{
	if (!t->nslot)
		return -1;
	for (size_t i = proc_hash(id, t->nslot);; i = (i + 1) & (t->nslot - 1)) {
		if (!t->slot[i])
			return -1;
		if (t->procs[t->slot[i] - 1].id == id)
			return (long)t->slot[i] - 1;
	}
}

/* A new process @id (not in the table), zeroed: its index, or -1 if out of memory. */
static long proc_add(struct proc_table *t, uint64_t id)
{
	if (t->n >= UINT32_MAX - 1)
		return -1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct mtr_proc *p = realloc(t->procs, cap * sizeof(*p));

		if (!p)
			return -1;
		t->procs = p;
		t->cap = cap;
	}
	if (2 * (t->n + 1) > t->nslot) {
		size_t ns = t->nslot ? 2 * t->nslot : 16;
		uint32_t *sl = calloc(ns, sizeof(*sl));

		if (!sl)
			return -1;
		free(t->slot);
		t->slot = sl;
		t->nslot = ns;
		for (size_t k = 0; k < t->n; k++) {
			size_t i = proc_hash(t->procs[k].id, ns);

			while (sl[i])
				i = (i + 1) & (ns - 1);
			sl[i] = (uint32_t)k + 1;
		}
	}
	t->procs[t->n] = (struct mtr_proc){ .id = id };
	{
		size_t i = proc_hash(id, t->nslot);

		while (t->slot[i])
			i = (i + 1) & (t->nslot - 1);
		t->slot[i] = (uint32_t)t->n + 1;
	}
	return (long)t->n++;
}

static void proc_table_free(struct proc_table *t)
{
	free(t->procs);
	free(t->slot);
}

struct mtr_reader {
	struct trace_reader head;
	struct tio *io;
	const unsigned char *p, *end; /* the undecoded bytes at hand */
	uint64_t off_end;             /* stream offset of @end */
	bool final;                   /* @end is the end of the stream */
	bool ended;                   /* the END marker has been checked */
	vaddr_t expect[2];            /* predicted address: [0] fetches, [1] data */
	uint64_t touch_vpn;           /* the page of the last TOUCH record + 1 (0 before the first) */
	uint64_t nrec;                /* records decoded */
	uint64_t loads;               /* load and modify records decoded (a DEP's d is at most this) */
	unsigned version;
	unsigned char save[MTR_MAXREC];
	unsigned char tail[MTR_MAXREC];
	size_t maps_sent;             /* initial mappings already sent as events */
	/* version 6: the processes (see the header); the current one is procs[cur] */
	struct proc_table pt;         /* every process seen (process 0 from the start) */
	size_t cur;
	bool cur_exited;              /* procs[cur] exited: only a switch (or END) may follow */
	bool map_late;                /* MAP records now are an exec'd image's (in order) */
	uint32_t execs;               /* exec events read so far (the image of later MAPs) */
	char why[160];                /* a message built for the record at hand */
	struct os_event ev[TRACE_BATCH];
};

enum { MTR_TRUNC = -2, MTR_BAD = -3, MTR_FULL = 2 /* no room in the batch: next time */ };

static uint64_t mtr_off(const struct mtr_reader *m, const unsigned char *p)
{
	return m->off_end - (uint64_t)(m->end - p);
}

static int mtr_truncated(struct mtr_reader *m, struct err *e)
{
	return err_set(e, m->head.name, 0, 0, "truncated mtr trace at byte %llu",
		       (unsigned long long)m->off_end);
}

static int mtr_corrupt(struct mtr_reader *m, const unsigned char *at, const char *why,
		       struct err *e) __attribute__((cold, noinline));

static int mtr_corrupt(struct mtr_reader *m, const unsigned char *at, const char *why,
		       struct err *e)
{
	if (tio_stream_error(m->io, e))
		return -1;
	return err_set(e, m->head.name, 0, 0, "corrupt mtr trace at byte %llu: %s",
		       (unsigned long long)mtr_off(m, at), why);
}

/* A varint at *@pp, bytes before @lim. 0, MTR_TRUNC or MTR_BAD (more than 64 bits). */
static int get_varint(const unsigned char **pp, const unsigned char *lim, uint64_t *v)
{
	const unsigned char *p = *pp;
	uint64_t x = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint64_t b;

		if (p >= lim)
			return MTR_TRUNC;
		b = *p++;
		if (shift == 63 && b > 1)
			return MTR_BAD;
		x |= (b & 0x7f) << shift;
		if (b < 0x80)
			break;
	}
	*pp = p;
	*v = x;
	return 0;
}

/* A length-prefixed name at *@pp into a new string *@out. 0, MTR_TRUNC, MTR_BAD. */
static int get_name(const unsigned char **pp, const unsigned char *lim, char **out,
		    const char **why)
{
	uint64_t len;
	int ret = get_varint(pp, lim, &len);

	if (ret) {
		*why = "varint longer than 64 bits";
		return ret;
	}
	if (len > MTR_PATH_MAX) {
		*why = "name longer than 4096 bytes";
		return MTR_BAD;
	}
	if ((uint64_t)(lim - *pp) < len)
		return MTR_TRUNC;
	*out = malloc(len + 1);
	if (!*out) {
		*why = "out of memory";
		return MTR_BAD;
	}
	memcpy(*out, *pp, len);
	(*out)[len] = 0;
	*pp += len;
	return 0;
}

/* Read @nv varints into @f. 0, MTR_TRUNC, MTR_BAD. */
static int get_varints(const unsigned char **pp, const unsigned char *lim, uint64_t *f,
		       unsigned nv, const char **why)
{
	for (unsigned i = 0; i < nv; i++) {
		int ret = get_varint(pp, lim, &f[i]);

		if (ret) {
			*why = "varint longer than 64 bits";
			return ret;
		}
	}
	return 0;
}

/*
 * The file table's entry for (@dev, @ino, @name), added if new (one entry per
 * device, inode and path); takes @name. *@idx is 1 + its index. 0 or MTR_BAD.
 */
static int file_index(struct trace_reader *h, uint64_t dev, uint64_t ino, char *name, uint32_t *idx,
		      const char **why)
{
	struct trace_file *t;

	for (size_t i = 0; i < h->nfiles; i++)
		if (h->files[i].dev == dev && h->files[i].ino == ino && !strcmp(h->files[i].path, name)) {
			free(name);
			*idx = (uint32_t)i + 1;
			return 0;
		}
	t = realloc(h->files, (h->nfiles + 1) * sizeof(*t));
	if (!t || h->nfiles >= UINT32_MAX - 1) {
		free(name);
		*why = "out of memory";
		return MTR_BAD;
	}
	h->files = t;
	h->files[h->nfiles++] = (struct trace_file){ .dev = dev, .ino = ino, .path = name };
	*idx = (uint32_t)h->nfiles;
	return 0;
}

/* A MAP record's fields (after the tag) into the reader's table. 0, MTR_TRUNC, MTR_BAD. */
static int mtr_map(struct mtr_reader *m, const unsigned char **pp, const unsigned char *lim,
		   const char **why)
{
	struct trace_reader *h = &m->head;
	struct trace_map *t;
	uint64_t f[7];
	char *name = NULL;
	int ret = get_varints(pp, lim, f, 7, why);

	if (ret || (ret = get_name(pp, lim, &name, why)))
		return ret;
	if (f[0] >= VADDR_LIMIT || f[1] > VADDR_LIMIT - f[0] || f[2] > 7) {
		free(name);
		*why = "bad mapping";
		return MTR_BAD;
	}
	t = realloc(h->maps, (h->nmaps + 1) * sizeof(*t));
	if (!t) {
		free(name);
		*why = "out of memory";
		return MTR_BAD;
	}
	h->maps = t;
	t = &h->maps[h->nmaps++];
	*t = (struct trace_map){ .start = f[0], .len = f[1], .prot = (uint32_t)f[2], .flags = f[3],
				 .dev = f[4], .ino = f[5], .off = f[6], .name = name };
	/* a file mapping's file joins the table its mmap events index, so both share it */
	if (!(t->flags & MAP_ANONYMOUS_) && name[0] && name[0] != '[') {
		char *copy = strdup(name);

		if (!copy) {
			*why = "out of memory";
			return MTR_BAD;
		}
		return file_index(h, t->dev, t->ino, copy, &t->file, why);
	}
	return 0;
}

/*
 * A FILE record's fields (device, inode, offset, path) into the file table
 * (one entry per device and inode); *@idx is 1 + its index, *@off the offset.
 */
static int mtr_file(struct mtr_reader *m, const unsigned char **pp, const unsigned char *lim,
		    uint32_t *idx, uint64_t *off, uint64_t fs[2], const char **why)
{
	struct trace_reader *h = &m->head;
	uint64_t f[3];
	char *name = NULL;
	int ret = get_varints(pp, lim, f, 3, why);

	if (ret || (ret = get_name(pp, lim, &name, why)))
		return ret;
	fs[0] = fs[1] = 0;
	if (m->version >= 5 && (ret = get_varints(pp, lim, fs, 2, why))) { /* f_type, pages */
		free(name);
		return ret;
	}
	if (fs[0] > UINT32_MAX) {
		free(name);
		*why = "filesystem type over 32 bits";
		return MTR_BAD;
	}
	*off = f[2];
	return file_index(h, f[0], f[1], name, idx, why);
}

/* A version 2 record that adds no reference (tag @t, fields at *@pp). 0, MTR_TRUNC, MTR_BAD. */
static int mtr_decode_v2(struct mtr_reader *m, unsigned t, const unsigned char **pp,
			 const unsigned char *lim, const char **why)
{
	uint64_t v, off, fs[2];
	uint32_t idx;
	int ret;

	if (m->version < 2) {
		*why = "unknown tag";
		return MTR_BAD;
	}
	if (t == MTR_TAG_MAP && m->map_late) {
		/* version 6: an exec'd image's mapping, in order (mtr_decode() made room) */
		if (!m->pt.procs[m->cur].image) {
			*why = "a mapping record not at the start of an image";
			return MTR_BAD;
		}
		if ((ret = mtr_map(m, pp, lim, why)))
			return ret;
		m->head.maps[m->head.nmaps - 1].image = m->pt.procs[m->cur].image;
		m->maps_sent = m->head.nmaps;
		return 0;
	}
	if (t == MTR_TAG_MAP)
		return mtr_map(m, pp, lim, why);
	if (t == MTR_TAG_FILE)
		return mtr_file(m, pp, lim, &idx, &off, fs, why); /* not after an mmap: kept in the table */
	ret = get_varint(pp, lim, &v);
	if (ret) {
		*why = "varint longer than 64 bits";
		return ret;
	}
	if (t == MTR_TAG_THREAD) {
		if (v > UINT32_MAX) {
			*why = "thread id over 32 bits";
			return MTR_BAD;
		}
		if (m->head.thread && m->head.thread != v)
			m->head.thread_switches++;
		m->head.thread = (uint32_t)v;
	} else if (t == MTR_TAG_FORK) {
		m->head.forks++;
	} else if (t == MTR_TAG_ROI) {
		m->head.roi_starts++;
	} else {
		*why = "unknown tag";
		return MTR_BAD;
	}
	return 0;
}

/* Keep the current process's decoding state in its table entry. */
static void mtr_proc_save(struct mtr_reader *m)
{
	struct mtr_proc *c = &m->pt.procs[m->cur];

	c->expect[0] = m->expect[0];
	c->expect[1] = m->expect[1];
	c->touch_vpn = m->touch_vpn;
	c->loads = m->loads;
	c->thread = m->head.thread;
}

/* The message of a process event the reader refuses, with the record's number. */
static int mtr_proc_bad(struct mtr_reader *m, const char **why, const char *fmt, uint64_t id)
{
	char what[100];

	snprintf(what, sizeof(what), fmt, (unsigned long long)id);
	snprintf(m->why, sizeof(m->why), "%s (record %llu)", what, (unsigned long long)m->nrec + 1);
	*why = m->why;
	return MTR_BAD;
}

/* A process event @o (version 6): the table and the current process move (see the header). */
static int mtr_proc_event(struct mtr_reader *m, const struct os_event *o, const char **why)
{
	uint64_t cur = m->pt.procs[m->cur].id;
	long i;

	switch (o->kind) {
	case EV_FORK:
		if (proc_find(&m->pt, o->addr) >= 0)
			return mtr_proc_bad(m, why, "fork of process %llu, which exists", o->addr);
		if (proc_add(&m->pt, o->addr) < 0)
			goto oom;
		m->head.forks++;
		m->head.processes++;
		return 0;
	case EV_SWITCH:
		if (o->addr == cur)
			return mtr_proc_bad(m, why, "switch to process %llu, which is running", cur);
		i = proc_find(&m->pt, o->addr);
		if (i >= 0 && m->pt.procs[i].exited)
			return mtr_proc_bad(m, why, "switch to process %llu, which exited", o->addr);
		mtr_proc_save(m);
		if (i < 0) { /* a new process, with an empty address space */
			i = proc_add(&m->pt, o->addr);
			if (i < 0)
				goto oom;
			m->head.processes++;
		}
		m->cur = (size_t)i;
		m->expect[0] = m->pt.procs[i].expect[0];
		m->expect[1] = m->pt.procs[i].expect[1];
		m->touch_vpn = m->pt.procs[i].touch_vpn;
		m->loads = m->pt.procs[i].loads;
		m->head.thread = m->pt.procs[i].thread;
		m->cur_exited = false;
		return 0;
	case EV_EXIT:
		m->pt.procs[m->cur].exited = true;
		m->cur_exited = true;
		return 0;
	case EV_EXEC: /* a new image: its stream starts afresh, its mappings follow */
		m->expect[0] = m->expect[1] = 0;
		m->touch_vpn = 0;
		m->loads = 0;
		m->pt.procs[m->cur].image = ++m->execs;
		return 0;
	default: /* EV_PRCTL */
		if (o->advice != PR_SET_THP_DISABLE_)
			return mtr_proc_bad(m, why, "prctl option %llu (only PR_SET_THP_DISABLE)", o->advice);
		return 0;
	}
oom:
	*why = "out of memory";
	return MTR_BAD;
}

/* An EVENT record after its tag at *@pp (and a FILE record right after an mmap's). */
static int mtr_decode_event(struct mtr_reader *m, const unsigned char **pp, const unsigned char *lim,
			    struct trace_rec *r, size_t *nev, const char **why)
{
	struct os_event *o = &m->ev[*nev];
	const unsigned char *p = *pp;
	uint64_t f[9], fs[2];
	int ret;

	if (p >= lim)
		return MTR_TRUNC;
	o->kind = *p++;
	for (int i = 0; i < 9; i++) {
		ret = get_varint(&p, lim, &f[i]);
		if (ret) {
			*why = "varint longer than 64 bits";
			return ret;
		}
	}
	/* a marker is a record of its own; the mlock kinds came with version 5, processes with 6 */
	if (o->kind == EV_MARKER || o->kind >= EV_NR || (o->kind > EV_MARKER && m->version < 5) ||
	    (o->kind >= EV_FORK && m->version < 6)) {
		*why = "bad event kind";
		return MTR_BAD;
	}
	if (f[0] > UINT32_MAX) {
		*why = "event prot over 32 bits";
		return MTR_BAD;
	}
	o->prot = (uint32_t)f[0];
	o->flags = f[1];
	o->fd = (int64_t)unzigzag(f[2]);
	o->advice = f[3];
	o->addr = f[4];
	o->len = f[5];
	o->new_addr = f[6];
	o->new_len = f[7];
	o->line = (unsigned long)f[8];
	o->off = 0;
	o->file = 0;
	o->thread = m->head.thread;
	o->initial = false;
	o->fs_magic = 0;
	o->fs_pages = 0;
	if (m->version >= 2 && o->kind == EV_MMAP && p < lim && *p == MTR_TAG_FILE) {
		/* The file behind it, decoded with it: a batch never separates them. */
		p++;
		ret = mtr_file(m, &p, lim, &o->file, &o->off, fs, why);
		if (ret)
			return ret;
		o->fs_magic = fs[0];
		o->fs_pages = fs[1];
		m->nrec++;
	}
	if (o->kind >= EV_FORK && (ret = mtr_proc_event(m, o, why)))
		return ret;
	*r = (struct trace_rec){ .addr = o->addr, .size = (uint32_t)*nev, .kind = R_EVENT };
	(*nev)++;
	*pp = p;
	return 0;
}

static size_t mtr_map_events(struct mtr_reader *m, const struct trace_map *t, size_t n, size_t *nev);

/*
 * Decode one record at m->p, reading no byte at or past @lim. Appends it to
 * the batch (n, nev) and returns 1, or returns 0 after the END marker (its
 * count checked), MTR_TRUNC if the record runs past @lim, MTR_BAD with *@why,
 * MTR_FULL when an exec'd image's mapping (up to 2 events) does not fit the batch.
 * m->p moves only when it returns 1 or 0.
 */
static int mtr_decode(struct mtr_reader *m, const unsigned char *lim, size_t *n, size_t *nev,
		      const char **why)
{
	const unsigned char *p = m->p;
	struct trace_rec *r = &m->head.rec[*n];
	uint64_t v;
	unsigned t;
	int ret;

#define GETV(x)                                          \
	do {                                             \
		ret = get_varint(&p, lim, &(x));         \
		if (ret) {                               \
			*why = "varint longer than 64 bits"; \
			return ret;                      \
		}                                        \
	} while (0)

	if (p >= lim)
		return MTR_TRUNC;
	t = *p++;
	if (unlikely(m->cur_exited) && t != MTR_TAG_END && (t != MTR_TAG_EVENT || p >= lim || *p != EV_SWITCH)) {
		if (t == MTR_TAG_EVENT && p >= lim)
			return MTR_TRUNC;
		return mtr_proc_bad(m, why, "a record of process %llu after its exit",
				    m->pt.procs[m->cur].id);
	}
	if (t == MTR_TAG_MAP && m->map_late) {
		size_t k0 = *n;

		if (*n + 2 > TRACE_BATCH)
			return MTR_FULL;
		ret = mtr_decode_v2(m, t, &p, lim, why);
		if (ret)
			return ret;
		*n = mtr_map_events(m, &m->head.maps[m->head.nmaps - 1], k0, nev);
		m->p = p;
		m->nrec++;
		return 1;
	}
	if (t < 0xc0) {
		unsigned kind = t & 3, form = t >> 6, st = kind != R_IFETCH;
		uint64_t size = (t >> 2) & 15;
		vaddr_t a = m->expect[st];

		if (!size) {
			GETV(size);
			if (!size || size > MTR_SIZE_MAX) {
				*why = "reference size out of range";
				return MTR_BAD;
			}
		}
		if (form == MTR_FORM_DELTA) {
			GETV(v);
			a += unzigzag(v);
		} else if (form == MTR_FORM_ABS) {
			if (lim - p < 7)
				return MTR_TRUNC;
			a = 0;
			for (int i = 6; i >= 0; i--)
				a = a << 8 | p[i];
			p += 7;
		}
		if (a >= VADDR_LIMIT) {
			*why = "address over 57 bits";
			return MTR_BAD;
		}
		m->expect[st] = a + size;
		m->loads += kind & 1; /* R_LOAD and R_MODIFY */
		*r = (struct trace_rec){ .addr = a, .size = (uint32_t)size, .kind = kind };
	} else if (t == MTR_TAG_DEP && m->version >= 4) {
		GETV(v);
		if (p >= lim)
			return MTR_TRUNC;
		if (!m->head.deps || !v || v > m->loads || v > UINT32_MAX || *p >= 0xc0) {
			*why = "bad dependence";
			return MTR_BAD;
		}
		*r = (struct trace_rec){ .addr = 0, .size = (uint32_t)v, .kind = R_DEP };
	} else if (t == MTR_TAG_INSNS) {
		GETV(v);
		if (!v || v > UINT32_MAX) {
			*why = "instruction count out of range";
			return MTR_BAD;
		}
		*r = (struct trace_rec){ .addr = 0, .size = (uint32_t)v, .kind = R_INSNS };
	} else if (t == MTR_TAG_EVENT) {
		ret = mtr_decode_event(m, &p, lim, r, nev, why);
		if (ret)
			return ret;
	} else if (t == MTR_TAG_MARKER && m->version >= 2) {
		struct os_event *o = &m->ev[*nev];

		GETV(v);
		*o = (struct os_event){ .kind = EV_MARKER, .advice = v, .addr = m->head.markers,
					.fd = -1, .thread = m->head.thread };
		m->head.markers++;
		*r = (struct trace_rec){ .addr = o->addr, .size = (uint32_t)*nev, .kind = R_EVENT };
		(*nev)++;
	} else if (t == MTR_TAG_TOUCH && m->version >= 3) {
		unsigned how;

		if (p >= lim)
			return MTR_TRUNC;
		how = *p++;
		GETV(v);
		v = m->touch_vpn + unzigzag(v);
		if (how >= TOUCH_NR || v >= VADDR_LIMIT >> PAGE_SHIFT) {
			*why = how >= TOUCH_NR ? "bad touch kind" : "address over 57 bits";
			return MTR_BAD;
		}
		m->touch_vpn = v + 1;
		*r = (struct trace_rec){ .addr = v << PAGE_SHIFT, .size = how, .kind = R_TOUCH };
	} else if (t == MTR_TAG_END) {
		GETV(v);
		if (v != m->nrec) {
			*why = "the end marker's record count does not match";
			return MTR_BAD;
		}
		m->p = p;
		return 0;
	} else {
		ret = mtr_decode_v2(m, t, &p, lim, why);
		if (ret)
			return ret;
		m->p = p;
		m->nrec++;
		return 1; /* nothing added to the batch */
	}
#undef GETV
	m->p = p;
	m->nrec++;
	(*n)++;
	return 1;
}

/*
 * Move to the next chunk, carrying the undecoded tail (< MTR_MAXREC bytes)
 * in front of it; at the end of the stream the tail becomes the final region.
 */
static int mtr_refill(struct mtr_reader *m, struct err *e)
{
	size_t r = (size_t)(m->end - m->p);
	unsigned char *q;
	ssize_t len;

	BUG_ON(r >= MTR_MAXREC);
	memcpy(m->save, m->p, r);
	len = tio_read_chunk(m->io, &q, e);
	if (len < 0)
		return -1;
	if (!len) {
		memcpy(m->tail, m->save, r);
		m->p = m->tail;
		m->end = m->tail + r;
		m->final = true;
		return 0;
	}
	memcpy(q - r, m->save, r);
	m->p = q - r;
	m->end = q + len;
	m->off_end += (uint64_t)len;
	return 0;
}

/* The END marker was decoded: nothing may follow it. */
static int mtr_check_end(struct mtr_reader *m, struct err *e)
{
	unsigned char *q;
	ssize_t len;

	if (m->p != m->end)
		return mtr_corrupt(m, m->p, "data after the end marker", e);
	if (!m->final) {
		len = tio_read_chunk(m->io, &q, e);
		if (len < 0)
			return -1;
		if (len)
			return mtr_corrupt(m, m->p, "data after the end marker", e);
	}
	m->ended = true;
	return 0;
}

/*
 * The fast loop: decode references with an inline size (forms 0, 1, 2) into
 * the batch from @n on, without bounds checks. Returns the new count; stops
 * at the batch's end, when fewer than MTR_MAXREC bytes remain, or at a record
 * it leaves to mtr_decode() (control, explicit size, a 10-byte varint, an
 * address over 57 bits), with m->p at that record.
 */
static size_t mtr_fast(struct mtr_reader *m, size_t n)
{
	const unsigned char *p = m->p;
	vaddr_t ei = m->expect[0], ed = m->expect[1];
	uint64_t loads = m->loads;
	struct trace_rec *rec = m->head.rec;
	size_t n0 = n;

	for (;;) {
		size_t room = (size_t)(m->end - p), stop;

		/*
		 * A reference taken here is at most 10 bytes (tag + 9-byte
		 * varint), so this many of them leave MTR_MAXREC bytes of slack:
		 * the loop below then tests only the record count.
		 */
		if (room < MTR_MAXREC || n == TRACE_BATCH)
			break;
		stop = n + (room - MTR_MAXREC) / 10 + 1;
		if (stop > TRACE_BATCH)
			stop = TRACE_BATCH;
		while (n < stop) {
			unsigned t = p[0], form = t >> 6, size = (t >> 2) & 15;
			unsigned kind = t & 3;
			vaddr_t a = kind == R_IFETCH ? ei : ed;
			const unsigned char *q = p + 1;

			/*
			 * A branch per form: measured 1.2x faster here than
			 * selecting forms 0 and 1 without branches (the forms
			 * follow the program's loops, which the predictor learns).
			 */
			if (unlikely(form == 3 || !size)) {
				/*
				 * A DEP of d < 128 before a reference: taken here (the
				 * capture writes one before most data references);
				 * anything else, mtr_decode().
				 */
				if (t != MTR_TAG_DEP || !m->head.deps || !q[0] || q[0] > loads ||
				    q[0] >= 0x80 || q[1] >= 0xc0 || m->version < 4)
					goto out; /* control record or explicit size */
				rec[n++] = (struct trace_rec){ .addr = 0, .size = q[0], .kind = R_DEP };
				p = q + 1;
				continue;
			}
			if (form == MTR_FORM_DELTA) {
				uint64_t v = *q++;

				if (unlikely(v >= 0x80)) {
					uint64_t c;
					unsigned sh = 7;

					v &= 0x7f;
					do {
						c = *q++;
						v |= (c & 0x7f) << sh;
						sh += 7;
					} while (c >= 0x80 && sh < 63);
					if (unlikely(c >= 0x80))
						goto out; /* a 10th byte: mtr_decode() checks it */
				}
				a += unzigzag(v);
			} else if (form == MTR_FORM_ABS) {
				uint64_t w;

				memcpy(&w, q, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
				w = __builtin_bswap64(w);
#endif
				a = w & 0x00ffffffffffffffULL;
				q += 7;
			}
			if (unlikely(a >= VADDR_LIMIT))
				goto out;
			if (kind == R_IFETCH)
				ei = a + size;
			else
				ed = a + size;
			rec[n].addr = a;
			rec[n].size = size;
			rec[n].kind = kind;
			loads += kind & 1; /* R_LOAD and R_MODIFY: a DEP's bound (no branch) */
			n++;
			p = q;
		}
	}
out:
	m->p = p;
	m->expect[0] = ei;
	m->expect[1] = ed;
	m->loads = loads;
	m->nrec += n - n0;
	return n;
}

/*
 * The initial mappings (version 2 MAP records) as events ahead of the first
 * reference, so the kernel model has the program image, the stack and the heap
 * as Linux had them at the first instruction: a mapping as an mmap at its address
 * (MAP_FIXED; a file mapping with its file; not MAP_STACK, which the kernel's
 * initial stack was not made with), the heap as the brk calls that made it. The
 * kernel's special mappings ([vdso], [vvar], [vsyscall]) are not memory the
 * model manages and stay out. Marked initial: not counted as the program's calls.
 */
/* The events of mapping @t at the batch's record @n (0 to 2 of them); the new @n. */
static size_t mtr_map_events(struct mtr_reader *m, const struct trace_map *t, size_t n, size_t *nev)
{
	struct os_event ev = { .kind = EV_MMAP, .prot = t->prot, .fd = t->file ? 0 : -1,
			       .addr = t->start, .len = t->len, .off = t->off,
			       .file = t->file, .initial = true, .thread = m->head.thread };

	if (!strcmp(t->name, "[vdso]") || !strcmp(t->name, "[vvar]") ||
	    !strcmp(t->name, "[vsyscall]") || !t->len)
		return n;
	ev.flags = (t->flags & ~(uint64_t)MAP_STACK_) | MAP_FIXED_;
	if (!strcmp(t->name, "[stack]"))
		ev.initial = EV_INITIAL_STACK; /* (reported as kind stack, vmas.c) */
	if (!strcmp(t->name, "[heap]")) { /* brk(start), then brk(end) */
		m->ev[*nev] = (struct os_event){ .kind = EV_BRK, .addr = t->start, .initial = true,
						 .thread = m->head.thread };
		m->head.rec[n++] = (struct trace_rec){ .addr = t->start, .size = (uint32_t)(*nev)++,
						       .kind = R_EVENT };
		ev = (struct os_event){ .kind = EV_BRK, .addr = t->start + t->len, .initial = true,
					.thread = m->head.thread };
	}
	m->ev[*nev] = ev;
	m->head.rec[n++] = (struct trace_rec){ .addr = ev.addr, .size = (uint32_t)(*nev)++,
					       .kind = R_EVENT };
	return n;
}

static size_t mtr_send_maps(struct mtr_reader *m, size_t *nev)
{
	const struct trace_reader *h = &m->head;
	size_t n = 0;

	while (m->maps_sent < h->nmaps && n + 2 <= TRACE_BATCH)
		n = mtr_map_events(m, &h->maps[m->maps_sent++], n, nev);
	return n;
}

static int mtr_next(struct trace_reader *tr, struct trace_batch *b, struct err *e)
{
	struct mtr_reader *m = (struct mtr_reader *)tr;
	size_t nev = 0, n = mtr_send_maps(m, &nev);
	const char *why = NULL;
	int ret;

	if (m->maps_sent < m->head.nmaps)
		goto out; /* a batch of mappings only: every one before the first reference */
	while (n < TRACE_BATCH && !m->ended) {
		if (!m->final) {
			if ((size_t)(m->end - m->p) < MTR_MAXREC) {
				if (mtr_refill(m, e))
					return -1;
				continue;
			}
			if (!m->cur_exited) { /* (an exited process's records are refused one by one) */
				n = mtr_fast(m, n);
				if (n == TRACE_BATCH || (size_t)(m->end - m->p) < MTR_MAXREC)
					continue;
			}
		}
		ret = mtr_decode(m, m->end, &n, &nev, &why);
		if (ret == 1)
			continue;
		if (ret == MTR_FULL)
			break;
		if (ret == 0) {
			if (mtr_check_end(m, e))
				return -1;
			break;
		}
		if (ret == MTR_TRUNC) {
			/* Only the final region can end inside a record. */
			BUG_ON(!m->final);
			return mtr_truncated(m, e);
		}
		return mtr_corrupt(m, m->p, why, e);
	}
out:
	b->recs = m->head.rec;
	b->n = n;
	b->ev = m->ev;
	b->nev = nev;
	return (int)n;
}

/* Version 2: read the leading MAP records, so that the mappings are known once the reader is open. */
static int mtr_initial_maps(struct mtr_reader *m, struct err *e)
{
	const char *why = NULL;
	size_t n = 0, nev = 0;
	int ret;

	if (m->version < 2)
		return 0;
	for (;;) {
		if (!m->final && (size_t)(m->end - m->p) < MTR_MAXREC) {
			if (mtr_refill(m, e))
				return -1;
			continue;
		}
		if (m->p >= m->end || *m->p != MTR_TAG_MAP)
			return 0;
		ret = mtr_decode(m, m->end, &n, &nev, &why);
		if (ret == MTR_TRUNC)
			return mtr_truncated(m, e);
		if (ret < 0)
			return mtr_corrupt(m, m->p, why, e);
	}
}

static void mtr_close(struct trace_reader *tr)
{
	struct mtr_reader *m = (struct mtr_reader *)tr;

	tio_close(m->io);
	proc_table_free(&m->pt);
	trace_reader_free(&m->head);
}

static const struct trace_ops mtr_ops = {
	.next = mtr_next,
	.close = mtr_close,
};

static unsigned get_le16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

struct trace_reader *trace_mtr_open(struct tio *io, const char *name, struct err *e)
{
	struct mtr_reader *m = trace_reader_alloc(sizeof(*m), &mtr_ops, TF_MTR, name, e);
	unsigned char *q = NULL;
	ssize_t len;
	size_t k;

	if (!m)
		goto fail;
	m->io = io;
	len = tio_read_chunk(io, &q, e);
	if (len < 0)
		goto fail;
	if (!len) {
		err_set(e, m->head.name, 0, 0, "truncated mtr trace at byte 0");
		goto fail;
	}
	k = (size_t)len < sizeof(mtr_magic) ? (size_t)len : sizeof(mtr_magic);
	if (memcmp(q, mtr_magic, k)) {
		err_set(e, m->head.name, 0, 0, "not an mtr trace (bad magic)");
		goto fail;
	}
	if (len < MTR_HEADER) {
		err_set(e, m->head.name, 0, 0, "truncated mtr trace at byte %zd", len);
		goto fail;
	}
	m->version = get_le16(q + 8);
	if (m->version < 1 || m->version > MTR_VERSION_MAX) {
		err_set(e, m->head.name, 0, 0,
			"unsupported mtr version %u (this build reads versions 1 to %d)",
			m->version, MTR_VERSION_MAX);
		goto fail;
	}
	if ((get_le16(q + 10) & ~(m->version >= 4 ? MTR_FLAG_DEPS : 0u)) || get_le32(q + 12)) {
		err_set(e, m->head.name, 0, 0, "unsupported mtr flags 0x%x/0x%x",
			get_le16(q + 10), get_le32(q + 12));
		goto fail;
	}
	m->head.version = m->version;
	m->head.deps = (get_le16(q + 10) & MTR_FLAG_DEPS) != 0;
	m->p = q + MTR_HEADER;
	m->end = q + len;
	m->off_end = (uint64_t)len;
	m->head.processes = 1;
	if (proc_add(&m->pt, 0) < 0) { /* process 0: the records before any switch */
		err_host(e, m->head.name, 0, 0, "out of memory");
		goto fail;
	}
	if (mtr_initial_maps(m, e))
		goto fail;
	m->map_late = m->version >= 6;
	return &m->head;
fail:
	tio_close(io);
	if (m)
		proc_table_free(&m->pt);
	trace_reader_free(m ? &m->head : NULL);
	return NULL;
}

/* ---------------------------------------------------------------- writer */

#define MTR_WBUF (1u << 20)  /* encoded bytes gathered before compression */

/* Each library's default level, as its command-line tool's (zstd 3, gzip 6, xz 6). */
static const int mtr_w_level[TIO_COMP_NR] = {
	[TIO_GZIP] = Z_DEFAULT_COMPRESSION,
	[TIO_XZ] = (int)LZMA_PRESET_DEFAULT,
	[TIO_ZSTD] = ZSTD_CLEVEL_DEFAULT,
};

struct mtr_writer {
	char path[4096];
	struct outfile of; /* the destination (outfile.h) */
	int fd;
	bool failed;
	enum tio_comp comp;
	struct zout z; /* the compressor and the writes (zout_free() safe when zeroed) */
	unsigned char *buf; /* encoded, not yet compressed */
	size_t len;
	vaddr_t expect[2];
	uint64_t touch_vpn; /* as the reader's */
	uint64_t nrec;
	uint64_t loads; /* load and modify records written (a DEP's d is at most this) */
	const struct trace_reader *src; /* version 2: the files of mmap events (mtr_write_all()) */
	unsigned version; /* of the header: 1, or 2 to 6 (mtr_writer_v2()) */
	struct proc_table pt; /* version 6: each process's state, as the reader's */
	size_t cur;
	bool cur_exited;
	uint32_t execs;
	bool deps; /* version 4's MTR_FLAG_DEPS: DEP records are written */
	bool dep_pending; /* a DEP was written: the next record must be a reference */
};

static int mtr_w_err(struct mtr_writer *w, struct err *e, const char *fmt, const char *arg)
{
	w->failed = true;
	return err_set(e, w->path, 0, 0, fmt, arg);
}

/*
 * Push the encoded buffer through the compressor into the file; @finish ends
 * the stream, in the same call, so that zstd's frame is the same as when the
 * whole file fits in one buffer (zout_finish()).
 */
static int mtr_w_flush(struct mtr_writer *w, bool finish, struct err *e)
{
	int r;

	if (finish)
		r = zout_finish(&w->z, w->buf, w->len, e);
	else
		r = zout_write(&w->z, w->buf, w->len, e);
	if (r) {
		w->failed = true;
		return -1;
	}
	w->len = 0;
	return 0;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static unsigned varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static unsigned char *mtr_put_name(unsigned char *p, const char *s)
{
	size_t n = strlen(s);

	if (n > MTR_PATH_MAX)
		n = MTR_PATH_MAX;
	p = put_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

/*
 * Version 2 from @src (a reader of version 2 with its initial mappings; 3
 * for a version 3 reader, whose R_TOUCH records it then writes; 4 for a
 * version 4 reader or a source that records dependences, whose R_DEP records
 * it then writes, with the header flag if @src->deps; 5 for a version 5
 * reader, whose mlock events it then writes):
 * write its mappings now, and the file of each mmap event with the event.
 * Called right after mtr_writer_open(). Thread switches, forks and region
 * starts are not carried over (the reader keeps only their counts).
 */
static int mtr_w_maps(struct mtr_writer *w, uint32_t image, struct err *e);

static int mtr_writer_v2(struct mtr_writer *w, const struct trace_reader *src, struct err *e)
{
	w->version = src->version >= 5 ? src->version : src->deps || src->version >= 4 ? 4 :
		     src->version >= 3 ? 3 : 2;
	w->deps = src->deps;
	w->buf[8] = (unsigned char)w->version; /* the header is still in the buffer */
	w->buf[10] = w->deps ? MTR_FLAG_DEPS : 0;
	w->src = src;
	return mtr_w_maps(w, 0, e);
}

/* The MAP records of @w->src's image @image (0: the first; k: after the k-th exec). */
static int mtr_w_maps(struct mtr_writer *w, uint32_t image, struct err *e)
{
	const struct trace_reader *src = w->src;

	for (size_t i = 0; src && i < src->nmaps; i++) {
		const struct trace_map *m = &src->maps[i];
		unsigned char *p;

		if (m->image != image)
			continue;
		if (w->len > MTR_WBUF - MTR_MAXREC && mtr_w_flush(w, false, e))
			return -1;
		p = w->buf + w->len;
		*p++ = MTR_TAG_MAP;
		p = put_varint(p, m->start);
		p = put_varint(p, m->len);
		p = put_varint(p, m->prot);
		p = put_varint(p, m->flags);
		p = put_varint(p, m->dev);
		p = put_varint(p, m->ino);
		p = put_varint(p, m->off);
		p = mtr_put_name(p, m->name);
		w->len = (size_t)(p - w->buf);
		w->nrec++;
	}
	return 0;
}

static void mtr_w_free(struct mtr_writer *w)
{
	proc_table_free(&w->pt);
	zout_free(&w->z);
	free(w->buf);
	free(w);
}

struct mtr_writer *mtr_writer_open(const char *path, struct err *e)
{
	struct mtr_writer *w = calloc(1, sizeof(*w));
	unsigned char *p;

	if (!w) {
		err_host(e, path, 0, 0, "out of memory");
		return NULL;
	}
	snprintf(w->path, sizeof(w->path), "%s", path);
	w->fd = -1;
	w->buf = malloc(MTR_WBUF);
	if (!w->buf) {
		err_host(e, path, 0, 0, "out of memory");
		goto fail;
	}
	if (outfile_open(&w->of, path, 0, e))
		goto fail;
	w->fd = w->of.fd;
	w->comp = strcmp(path, "-") ? tio_comp_from_suffix(path) : TIO_NONE;
	/* No zstd frame checksum (ZSTD_c_checksumFlag's default, 0): flags 0. */
	if (zout_init(&w->z, w->fd, w->comp, mtr_w_level[w->comp], 0, w->path, e))
		goto fail;

	p = w->buf;
	memcpy(p, mtr_magic, sizeof(mtr_magic));
	p += sizeof(mtr_magic);
	*p++ = MTR_VERSION & 0xff;
	*p++ = MTR_VERSION >> 8;
	w->version = MTR_VERSION;
	memset(p, 0, 6); /* flags, reserved */
	p += 6;
	w->len = (size_t)(p - w->buf);
	if (proc_add(&w->pt, 0) < 0) {
		err_host(e, path, 0, 0, "out of memory");
		goto fail;
	}
	return w;

fail:
	outfile_abort(&w->of);
	mtr_w_free(w);
	return NULL;
}

/* A process event @o (version 6): the writer's table moves as the reader's (see the header). */
static int mtr_w_proc_event(struct mtr_writer *w, const struct os_event *o, struct err *e)
{
	struct mtr_proc *c = &w->pt.procs[w->cur];
	long i;

	switch (o->kind) {
	case EV_FORK:
		if (proc_find(&w->pt, o->addr) >= 0) {
			w->failed = true;
			return err_set(e, w->path, 0, 0, "fork of process %llu, which exists",
				       (unsigned long long)o->addr);
		}
		if (proc_add(&w->pt, o->addr) < 0)
			goto oom;
		return 0;
	case EV_SWITCH:
		i = proc_find(&w->pt, o->addr);
		if (o->addr == c->id || (i >= 0 && w->pt.procs[i].exited)) {
			w->failed = true;
			return err_set(e, w->path, 0, 0, "switch to process %llu, which %s",
				       (unsigned long long)o->addr, o->addr == c->id ? "is running" : "exited");
		}
		c->expect[0] = w->expect[0];
		c->expect[1] = w->expect[1];
		c->touch_vpn = w->touch_vpn;
		c->loads = w->loads;
		if (i < 0 && (i = proc_add(&w->pt, o->addr)) < 0)
			goto oom;
		w->cur = (size_t)i;
		c = &w->pt.procs[i];
		w->expect[0] = c->expect[0];
		w->expect[1] = c->expect[1];
		w->touch_vpn = c->touch_vpn;
		w->loads = c->loads;
		w->cur_exited = false;
		return 0;
	case EV_EXIT:
		c->exited = true;
		w->cur_exited = true;
		return 0;
	case EV_EXEC:
		w->expect[0] = w->expect[1] = 0;
		w->touch_vpn = 0;
		w->loads = 0;
		w->execs++;
		return 0;
	default:
		return 0;
	}
oom:
	w->failed = true;
	return err_host(e, w->path, 0, 0, "out of memory");
}

/* Encode one memory reference at @p; returns the new end. */
static unsigned char *mtr_put_ref(struct mtr_writer *w, unsigned char *p, const struct trace_rec *r)
{
	unsigned st = r->kind != R_IFETCH;
	uint64_t d = r->addr - w->expect[st], z = zigzag(d);
	unsigned size = r->size <= 15 ? r->size : 0;
	unsigned form, t;

	if (!d)
		form = MTR_FORM_PRED;
	else if (varint_len(z) <= 7 || r->addr >= MTR_FORM_ABS_LIMIT)
		form = MTR_FORM_DELTA;
	else
		form = MTR_FORM_ABS;
	t = form << 6 | size << 2 | r->kind;
	*p++ = (unsigned char)t;
	if (!size)
		p = put_varint(p, r->size);
	if (form == MTR_FORM_DELTA) {
		p = put_varint(p, z);
	} else if (form == MTR_FORM_ABS) {
		for (int i = 0; i < 7; i++)
			*p++ = (unsigned char)(r->addr >> (8 * i));
	}
	w->expect[st] = r->addr + r->size;
	return p;
}

int mtr_writer_put(struct mtr_writer *w, const struct trace_batch *b, struct err *e)
{
	if (w->failed)
		return err_set(e, w->path, 0, 0, "not written after an earlier error");
	for (size_t i = 0; i < b->n; i++) {
		const struct trace_rec *r = &b->recs[i];
		unsigned char *p;

		if (w->len > MTR_WBUF - MTR_MAXREC && mtr_w_flush(w, false, e))
			return -1;
		p = w->buf + w->len;
		if (unlikely(w->cur_exited) && (r->kind != R_EVENT || b->ev[r->size].kind != EV_SWITCH)) {
			w->failed = true;
			return err_set(e, w->path, 0, 0, "a record of process %llu after its exit",
				       (unsigned long long)w->pt.procs[w->cur].id);
		}
		if (unlikely(w->dep_pending)) {
			if (r->kind > R_MODIFY) {
				w->failed = true;
				return err_set(e, w->path, 0, 0, "a dependence not right before a reference");
			}
			w->dep_pending = false;
		}
		switch (r->kind) {
		case R_IFETCH:
		case R_LOAD:
		case R_STORE:
		case R_MODIFY:
			if (r->addr >= VADDR_LIMIT) {
				w->failed = true;
				return err_set(e, w->path, 0, 0, "address 0x%llx is over %d bits",
					       (unsigned long long)r->addr, VADDR_BITS_MAX);
			}
			if (!r->size || r->size > MTR_SIZE_MAX) {
				w->failed = true;
				return err_set(e, w->path, 0, 0, "reference size %u is not in 1..%u",
					       r->size, MTR_SIZE_MAX);
			}
			p = mtr_put_ref(w, p, r);
			w->loads += r->kind & 1; /* R_LOAD and R_MODIFY */
			break;
		case R_DEP:
			if (!w->deps || !r->size || r->size > w->loads || w->dep_pending) {
				w->failed = true;
				if (!w->deps)
					return err_set(e, w->path, 0, 0, "a dependence needs mtr version 4 "
						       "(a source that records dependences)");
				return err_set(e, w->path, 0, 0, "bad dependence %u after %llu loads",
					       r->size, (unsigned long long)w->loads);
			}
			*p++ = MTR_TAG_DEP;
			p = put_varint(p, r->size);
			w->dep_pending = true;
			w->len = (size_t)(p - w->buf);
			w->nrec++;
			continue;
		case R_TOUCH:
			if (w->version < 3 || r->size >= TOUCH_NR || r->addr >= VADDR_LIMIT) {
				w->failed = true;
				return err_set(e, w->path, 0, 0, w->version < 3
					       ? "a touched page needs mtr version 3 (a source of version 3)"
					       : "bad touched page 0x%llx", (unsigned long long)r->addr);
			}
			*p++ = MTR_TAG_TOUCH;
			*p++ = (unsigned char)r->size;
			p = put_varint(p, zigzag((r->addr >> PAGE_SHIFT) - w->touch_vpn));
			w->touch_vpn = (r->addr >> PAGE_SHIFT) + 1;
			break;
		case R_INSNS:
			if (!r->size) {
				w->failed = true;
				return err_set(e, w->path, 0, 0, "instruction count 0");
			}
			*p++ = MTR_TAG_INSNS;
			p = put_varint(p, r->size);
			break;
		case R_EVENT: {
			const struct os_event *o;

			BUG_ON(r->size >= b->nev);
			o = &b->ev[r->size];
			BUG_ON(o->kind >= EV_NR);
			if (o->initial)
				continue; /* written as MAP records, from the source's maps */
			if (o->kind == EV_MARKER) {
				if (w->version < 2) {
					w->failed = true;
					return err_set(e, w->path, 0, 0,
						       "a marker needs mtr version 2 (a source with mappings)");
				}
				*p++ = MTR_TAG_MARKER;
				p = put_varint(p, o->advice);
				break;
			}
			if (o->kind > EV_MARKER && w->version < (o->kind >= EV_FORK ? 6u : 5u)) {
				w->failed = true;
				return err_set(e, w->path, 0, 0, "the %s event needs mtr version %u (a source of version %u)",
					       ev_kind_name[o->kind], o->kind >= EV_FORK ? 6 : 5,
					       o->kind >= EV_FORK ? 6 : 5);
			}
			if (o->kind >= EV_FORK && mtr_w_proc_event(w, o, e))
				return -1;
			*p++ = MTR_TAG_EVENT;
			*p++ = (unsigned char)o->kind;
			p = put_varint(p, o->prot);
			p = put_varint(p, o->flags);
			p = put_varint(p, zigzag((uint64_t)o->fd));
			p = put_varint(p, o->advice);
			p = put_varint(p, o->addr);
			p = put_varint(p, o->len);
			p = put_varint(p, o->new_addr);
			p = put_varint(p, o->new_len);
			p = put_varint(p, o->line);
			if (w->src && o->kind == EV_MMAP && o->file && o->file <= w->src->nfiles) {
				const struct trace_file *f = &w->src->files[o->file - 1];

				/* Room: MTR_WBUF keeps MTR_MAXREC free, and event + FILE fit in it. */
				*p++ = MTR_TAG_FILE;
				p = put_varint(p, f->dev);
				p = put_varint(p, f->ino);
				p = put_varint(p, o->off);
				p = mtr_put_name(p, f->path);
				if (w->version >= 5) {
					p = put_varint(p, o->fs_magic);
					p = put_varint(p, o->fs_pages);
				}
				w->nrec++;
			}
			if (o->kind == EV_EXEC) { /* the new image's mappings right after its exec */
				w->len = (size_t)(p - w->buf);
				w->nrec++;
				if (mtr_w_maps(w, w->execs, e))
					return -1;
				continue;
			}
			break;
		}
		default:
			BUG_ON(1);
		}
		w->len = (size_t)(p - w->buf);
		w->nrec++;
	}
	return 0;
}

int mtr_writer_close(struct mtr_writer *w, bool commit, struct err *e)
{
	int ret = 0;

	if (!w)
		return 0;
	if (commit && w->failed) {
		ret = err_set(e, w->path, 0, 0, "not written after an earlier error");
		commit = false;
	}
	if (commit && w->dep_pending) {
		ret = err_set(e, w->path, 0, 0, "a dependence not right before a reference");
		commit = false;
	}
	if (commit) {
		unsigned char *p = w->buf + w->len;

		*p++ = MTR_TAG_END;
		p = put_varint(p, w->nrec);
		w->len = (size_t)(p - w->buf);
		if (mtr_w_flush(w, true, e))
			ret = -1;
	}
	if (commit && !ret) {
		struct err ce = { 0 };

		if (outfile_commit(&w->of, &ce))
			ret = mtr_w_err(w, e, "write error: %s", strerror(errno));
	} else {
		outfile_abort(&w->of);
	}
	mtr_w_free(w);
	return ret;
}

int mtr_write_all(struct trace_reader *tr, const char *out, struct err *e)
{
	struct mtr_writer *w = mtr_writer_open(out, e);
	struct trace_batch b;
	int n = 0;

	if (w && (tr->nmaps || tr->version >= 3 || tr->deps) && mtr_writer_v2(w, tr, e)) {
		mtr_writer_close(w, false, NULL);
		trace_close(tr);
		return e->host ? -2 : -1;
	}
	if (w) {
		while ((n = trace_next(tr, &b, e)) > 0)
			if (mtr_writer_put(w, &b, e))
				break;
		if (n != 0)
			mtr_writer_close(w, false, NULL);
		else if (mtr_writer_close(w, true, e))
			n = -1;
	}
	trace_close(tr);
	if (!w || n)
		return e->host ? -2 : -1;
	return 0;
}
