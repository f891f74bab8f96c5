//go:build ignore

// array_of_structs: a fixed table of rules in one map value, matched in a
// loop with a variable index.
#include "corpus.h"

struct rule {
	__u32 kind;
	__u32 min_len;
	__u32 action;
	__u32 hits;
};

struct rules {
	__u32 count;
	__u32 pad;
	struct rule r[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rules);
} ruleset SEC(".maps");

SEC("uebpf")
int match_rules(struct event *e)
{
	__u32 zero = 0;
	struct rules *rs = bpf_map_lookup_elem(&ruleset, &zero);

	if (!rs)
		return 0;
	__u32 n = rs->count;
	NO_UNROLL
	for (__u32 i = 0; i < 8; i++) {
		if (i >= n)
			break;
		struct rule *r = &rs->r[i];
		if (r->kind == e->kind && e->len >= r->min_len) {
			__sync_fetch_and_add(&r->hits, 1);
			return r->action;
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
