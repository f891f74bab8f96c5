/*
 * The tracepoint provider "bench": one event, "ev", with the payload of
 * the uebpf comparison: three int64 and a fixed 16-byte text array.
 * lttng-ust's headers read this file several times (the multi-read
 * pattern its tracepoint.h documents), hence the guards' shape.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./bench_tp.h"

#if !defined(BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, ev,
	LTTNG_UST_TP_ARGS(int64_t, a, int64_t, b, int64_t, c, const char *, s),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, a, a)
		lttng_ust_field_integer(int64_t, b, b)
		lttng_ust_field_integer(int64_t, c, c)
		lttng_ust_field_array_text(char, s, s, 16)
	)
)

#endif /* BENCH_TP_H */

#include <lttng/tracepoint-event.h>
