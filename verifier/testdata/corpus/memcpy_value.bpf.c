//go:build ignore

// memcpy_value snapshots one map value into another through the stack.
#include "corpus.h"

struct blob {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct blob);
} blobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct blob);
} snapshots SEC(".maps");

SEC("uebpf")
int snapshot(struct event *e)
{
	__u32 k = 0;
	struct blob *src = bpf_map_lookup_elem(&blobs, &k);
	struct blob copy;

	if (!src)
		return 0;
	__builtin_memcpy(&copy, src, sizeof(copy));
	copy.w[0] = e->ts;
	k = e->pid;
	return bpf_map_update_elem(&snapshots, &k, &copy, BPF_ANY);
}

SEC("uebpf")
int restore(struct event *e)
{
	__u32 k = e->pid, zero = 1;
	struct blob *s = bpf_map_lookup_elem(&snapshots, &k);
	struct blob *dst = bpf_map_lookup_elem(&blobs, &zero);

	if (!s || !dst)
		return 0;
	__builtin_memcpy(dst, s, sizeof(*dst));
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
