/* The probe of provider "bench", compiled into the benchmark itself. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench_tp.h"
