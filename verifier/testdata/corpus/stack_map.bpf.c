//go:build ignore

// stack_map keeps a LIFO of recent addresses: push, peek, pop.
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 32);
	__type(value, __u64);
} recent SEC(".maps");

SEC("uebpf")
int stack_push(struct event *e)
{
	__u64 a = e->addr;

	return bpf_map_push_elem(&recent, &a, 0);
}

SEC("uebpf")
int stack_top(struct event *e)
{
	__u64 top = 0;

	if (bpf_map_peek_elem(&recent, &top))
		return 0;
	if (top == e->addr) {
		bpf_map_pop_elem(&recent, &top);
		return 1;
	}
	return 2;
}

char LICENSE[] SEC("license") = "GPL";
