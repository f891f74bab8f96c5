//go:build ignore

// bpf_loop_map scans an array map with bpf_loop until it finds a free slot,
// which it claims.
#include "corpus.h"

#define SLOTS 64

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps");

struct scan {
	__u64 owner;
	__s32 found;
};

static long claim(__u32 i, struct scan *s)
{
	__u64 *v = bpf_map_lookup_elem(&slots, &i);

	if (!v)
		return 1;
	if (*v == 0) {
		*v = s->owner;
		s->found = i;
		return 1;
	}
	return 0;
}

SEC("uebpf")
int claim_slot(struct event *e)
{
	struct scan s = { .owner = e->pid | 1, .found = -1 };

	bpf_loop(SLOTS, claim, &s, 0);
	return s.found;
}

static long count_nonzero(__u32 i, __u64 *count)
{
	__u64 *v = bpf_map_lookup_elem(&slots, &i);

	if (v && *v)
		(*count)++;
	return 0;
}

SEC("uebpf")
int used_slots(struct event *e)
{
	__u64 count = 0;

	bpf_loop(SLOTS, count_nonzero, &count, 0);
	return count;
}

char LICENSE[] SEC("license") = "GPL";
