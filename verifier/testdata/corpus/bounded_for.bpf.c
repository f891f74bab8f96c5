//go:build ignore

// bounded_for: classic bounded loops over the context and a map value.
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[16]);
} table SEC(".maps");

SEC("uebpf")
int sum_args(struct event *e)
{
	__u64 sum = 0;

	NO_UNROLL
	for (int i = 0; i < 4; i++)
		sum += e->arg[i];
	return sum;
}

SEC("uebpf")
int sum_table(struct event *e)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&table, &zero);
	__u64 sum = 0;
	__u32 n = e->len;

	if (!t)
		return 0;
	if (n > 16)
		n = 16;
	NO_UNROLL
	for (__u32 i = 0; i < n; i++)
		sum += t[i];
	return sum;
}

SEC("uebpf")
int fill_table(struct event *e)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&table, &zero);

	if (!t)
		return 0;
	NO_UNROLL
	for (int i = 0; i < 16; i++)
		t[i] = e->ts + i;
	return 16;
}

char LICENSE[] SEC("license") = "GPL";
