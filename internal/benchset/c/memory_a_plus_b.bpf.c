//go:build ignore

// memory_a_plus_b: two loads from the context and an add.
#include "uebpf_helpers.h"

struct ab {
	__u32 a, b;
};

SEC("uebpf/bench")
__u64 memory_a_plus_b(struct ab *m)
{
	return (__u64)m->a + m->b;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
