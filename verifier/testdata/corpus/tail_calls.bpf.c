//go:build ignore

// tail_calls dispatches on the event kind through a program array; each
// stage may chain to the next.
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 8);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} stages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void hit(__u32 stage)
{
	__u64 *n = bpf_map_lookup_elem(&hits, &stage);

	if (n)
		__sync_fetch_and_add(n, 1);
}

SEC("uebpf")
int tc_dispatch(struct event *e)
{
	hit(0);
	bpf_tail_call(e, &stages, e->kind & 7);
	return -1;
}

SEC("uebpf")
int tc_stage1(struct event *e)
{
	hit(1);
	if (e->len > 100)
		bpf_tail_call(e, &stages, 2);
	return 1;
}

SEC("uebpf")
int tc_stage2(struct event *e)
{
	hit(2);
	return 2;
}

char LICENSE[] SEC("license") = "GPL";
