//go:build ignore

// log2_int: the integer log2 of 1024 u64 values, summed.
#include "uebpf_helpers.h"

#define N 1024

static __always_inline __u64 log2_u64(__u64 v)
{
	__u64 r = 0, s;

	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	return r | (v >> 1);
}

/* The context: the program reads it whole, so its type gives the verifier
 * its size. */
struct values {
	__u64 v[N];
};

SEC("uebpf/bench")
__u64 log2_int(struct values *values)
{
	__u64 sum = 0;

	for (int i = 0; i < N; i++)
		sum += log2_u64(values->v[i]);
	return sum;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
