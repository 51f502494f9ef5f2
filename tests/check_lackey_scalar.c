/*
 * check_lackey_scalar.c - check_lackey_parse.c over the lackey reader's
 * portable fast path (the 8 digits as one 64-bit word, no SSE2): the reader
 * is compiled in here with LK_NO_SSE2, so the archive's trace_lackey.o, whose
 * two global functions this file then defines, is not linked.
 */
#define LK_NO_SSE2
#define LK_SUITE "lackey_scalar"
#include "../sim/trace_lackey.c"
#include "check_lackey_parse.c"
