//go:build ignore

// percpu_hash sums bytes per process in a per-CPU hash.
#include "corpus.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} bytes SEC(".maps");

SEC("uebpf")
int bytes_per_pid(struct event *e)
{
	__u32 pid = e->pid;
	__u64 *b = bpf_map_lookup_elem(&bytes, &pid);

	if (b) {
		*b += e->len;
		return 0;
	}
	__u64 init = e->len;
	return bpf_map_update_elem(&bytes, &pid, &init, BPF_ANY);
}

char LICENSE[] SEC("license") = "GPL";
