//go:build ignore

// lru_percpu_hash keeps a per-CPU latency minimum and maximum per kind.
#include "corpus.h"

struct minmax {
	__u64 min;
	__u64 max;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, struct minmax);
} lat SEC(".maps");

SEC("uebpf")
int latency_minmax(struct event *e)
{
	__u32 kind = e->kind;
	__u64 v = e->arg[0];
	struct minmax *m = bpf_map_lookup_elem(&lat, &kind);

	if (!m) {
		struct minmax n = { .min = v, .max = v };
		bpf_map_update_elem(&lat, &kind, &n, BPF_NOEXIST);
		return 0;
	}
	if (v < m->min)
		m->min = v;
	if (v > m->max)
		m->max = v;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
