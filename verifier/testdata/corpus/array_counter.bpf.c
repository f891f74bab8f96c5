//go:build ignore

// array_counter counts events per kind in an array, with atomic adds.
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("uebpf")
int count_kind(struct event *e)
{
	__u32 key = e->kind & 15;
	__u64 *n = bpf_map_lookup_elem(&counts, &key);

	if (!n)
		return 0;
	__sync_fetch_and_add(n, 1);
	return 1;
}

SEC("uebpf")
int count_bytes(struct event *e)
{
	__u32 key = e->kind;
	__u64 *n;

	if (key >= 16)
		return 0;
	n = bpf_map_lookup_elem(&counts, &key);
	if (n)
		*n += e->len;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
