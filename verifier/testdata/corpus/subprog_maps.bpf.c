//go:build ignore

// subprog_maps: a function that looks up or creates a map entry and returns
// a pointer to it, used by two callers.
#include "corpus.h"

struct counter {
	__u64 n;
	__u64 sum;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct counter);
} counters SEC(".maps");

static __noinline struct counter *get_counter(__u32 key)
{
	struct counter *c = bpf_map_lookup_elem(&counters, &key);

	if (c)
		return c;
	struct counter zero = {};
	bpf_map_update_elem(&counters, &key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&counters, &key);
}

static __noinline int bump(__u32 key, __u64 v)
{
	struct counter *c = get_counter(key);

	if (!c)
		return 0;
	__sync_fetch_and_add(&c->n, 1);
	__sync_fetch_and_add(&c->sum, v);
	return 1;
}

SEC("uebpf")
int count_pid(struct event *e)
{
	return bump(e->pid, e->len);
}

SEC("uebpf")
int count_kind_pid(struct event *e)
{
	return bump(e->kind << 16 | (e->pid & 0xffff), e->len) + bump(0, 1);
}

char LICENSE[] SEC("license") = "GPL";
