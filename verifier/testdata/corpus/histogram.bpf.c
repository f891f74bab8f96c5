//go:build ignore

// histogram: a log2 histogram of event lengths in an array map.
#include "corpus.h"

#define BUCKETS 32

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline __u32 log2u(__u32 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

SEC("uebpf")
int len_hist(struct event *e)
{
	__u32 b = log2u(e->len);
	__u64 *n;

	if (b >= BUCKETS)
		b = BUCKETS - 1;
	n = bpf_map_lookup_elem(&hist, &b);
	if (n)
		__sync_fetch_and_add(n, 1);
	return b;
}

char LICENSE[] SEC("license") = "GPL";
