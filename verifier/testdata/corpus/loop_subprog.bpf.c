//go:build ignore

// loop_subprog: a bpf_loop callback that calls a bpf-to-bpf function and
// writes a map value, and a nested bounded loop in the caller.
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} squares SEC(".maps");

static __noinline __u64 square(__u64 x)
{
	return x * x;
}

static long store_square(__u32 i, void *unused)
{
	__u64 *v = bpf_map_lookup_elem(&squares, &i);

	if (!v)
		return 1;
	*v = square(i);
	return 0;
}

SEC("uebpf")
int fill_squares(struct event *e)
{
	return bpf_loop(16, store_square, 0, 0);
}

SEC("uebpf")
int matrix(struct event *e)
{
	__u64 acc = 0;

	NO_UNROLL
	for (int i = 0; i < 8; i++) {
		NO_UNROLL
		for (int j = 0; j < 8; j++)
			acc += (e->arg[i & 3] >> j) & 1;
	}
	return acc;
}

char LICENSE[] SEC("license") = "GPL";
