//go:build ignore

// percpu_array keeps per-CPU statistics without atomics.
#include "corpus.h"

struct stats {
	__u64 events;
	__u64 bytes;
	__u64 max_len;
	__u64 last_ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stats);
} stats SEC(".maps");

SEC("uebpf")
int percpu_stats(struct event *e)
{
	__u32 zero = 0;
	struct stats *s = bpf_map_lookup_elem(&stats, &zero);

	if (!s)
		return 0;
	s->events++;
	s->bytes += e->len;
	if (e->len > s->max_len)
		s->max_len = e->len;
	s->last_ts = e->ts;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
