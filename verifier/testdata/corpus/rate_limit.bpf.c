//go:build ignore

// rate_limit is a token bucket per process, refilled from the clock.
#include "corpus.h"

struct bucket {
	__u64 tokens;
	__u64 last;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct bucket);
} buckets SEC(".maps");

const volatile __u64 rate_per_ms = 10;
const volatile __u64 burst = 100;

SEC("uebpf")
int allow(struct event *e)
{
	__u32 pid = e->pid;
	__u64 now = bpf_ktime_get_ns();
	struct bucket *b = bpf_map_lookup_elem(&buckets, &pid);

	if (!b) {
		struct bucket nb = { .tokens = burst - 1, .last = now };
		bpf_map_update_elem(&buckets, &pid, &nb, BPF_ANY);
		return 1;
	}
	__u64 add = (now - b->last) / 1000000 * rate_per_ms;
	__u64 t = b->tokens + add;
	if (t > burst)
		t = burst;
	b->last = now;
	if (t == 0) {
		b->tokens = 0;
		return 0;
	}
	b->tokens = t - 1;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
