/*
 * mmusim_roi.h - a region of interest for `mmusim capture`: a program marks
 * what it wants traced.
 *
 *   #include <mmusim_roi.h>
 *   ...setup...
 *   MMUSIM_ROI_BEGIN();
 *   ...the part to simulate...
 *   MMUSIM_ROI_END();
 *
 * Under mmusim's Valgrind tool (`mmusim capture`, the default) with --roi,
 * memory references are recorded only between BEGIN and END (mapping system
 * calls are recorded throughout: the replay needs them, and so are the pages
 * the program touches outside the region, once each, so that the replay
 * starts the region from the memory the program set up); without --roi, the
 * recording runs from the start, END pauses it and BEGIN resumes it. BEGIN and
 * END set aside --skip-insns/--max-insns. Natively,
 * and under any other Valgrind tool (lackey), the macros do nothing and cost a
 * few instructions (Valgrind's client-request sequence, valgrind.h).
 */
#ifndef MMUSIM_ROI_H
#define MMUSIM_ROI_H

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#define MMUSIM_ROI_HAVE_VALGRIND 1
#endif
#else
#define MMUSIM_ROI_HAVE_VALGRIND 1
#endif

#ifdef MMUSIM_ROI_HAVE_VALGRIND
#include <valgrind/valgrind.h>

enum {
	MMUSIM_USERREQ_ROI_BEGIN = VG_USERREQ_TOOL_BASE('M', 'M'),
	MMUSIM_USERREQ_ROI_END,
};

#define MMUSIM_ROI_BEGIN() VALGRIND_DO_CLIENT_REQUEST_STMT(MMUSIM_USERREQ_ROI_BEGIN, 0, 0, 0, 0, 0)
#define MMUSIM_ROI_END() VALGRIND_DO_CLIENT_REQUEST_STMT(MMUSIM_USERREQ_ROI_END, 0, 0, 0, 0, 0)
#else
/* Without Valgrind's valgrind.h (package valgrind) the program cannot be traced by region. */
#define MMUSIM_ROI_BEGIN() ((void)0)
#define MMUSIM_ROI_END() ((void)0)
#endif

#endif
