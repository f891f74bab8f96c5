//go:build ignore

// filter counts, per process, the system calls slower than a threshold.
// The application fires it with a struct event for every call.
#include "uebpf_helpers.h"

struct event {
	__u32 pid;
	__u32 syscall;
	__u64 latency_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);   // pid
	__type(value, __u64); // slow calls
} slow_calls SEC(".maps");

// Set from Go before loading (Options.Variables).
const volatile __u64 min_latency_ns = 1000000;

SEC("uebpf/tracepoint/syscall_exit")
int count_slow(struct event *e)
{
	__u32 pid = e->pid;
	__u64 one = 1, *n;

	if (e->latency_ns < min_latency_ns)
		return 0;
	n = bpf_map_lookup_elem(&slow_calls, &pid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&slow_calls, &pid, &one, BPF_NOEXIST);
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
