//go:build ignore

// global_data uses .rodata configuration, .data and .bss counters.
#include "corpus.h"

const volatile __u32 min_len = 64;
const volatile __u32 kinds_enabled = 0xff;
__u64 total = 1;  // .data
__u64 dropped;    // .bss
__u64 per_kind[8]; // .bss

SEC("uebpf")
int filter_len(struct event *e)
{
	if (!(kinds_enabled & (1u << (e->kind & 7))) || e->len < min_len) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	__sync_fetch_and_add(&total, 1);
	per_kind[e->kind & 7] += e->len;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
