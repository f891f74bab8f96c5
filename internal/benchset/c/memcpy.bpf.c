//go:build ignore

// memcpy: copies 1 MiB byte by byte, from the first half of the context to
// the second, and returns a checksum of a few copied bytes. Compiled as
// native code (native/driver.c) the loop is clang's to vectorise, as it
// would be in a C program.
#include "uebpf_helpers.h"

#define SIZE (1 << 20)

struct buffers {
	__u8 src[SIZE];
	__u8 dst[SIZE];
};

SEC("uebpf/bench")
__attribute__((no_builtin("memcpy")))
__u64 memcpy_1m(struct buffers *b)
{
	for (__u32 i = 0; i < SIZE; i++) {
		b->dst[i] = b->src[i];
#ifdef __bpf__
		asm volatile("" ::: "memory"); // keep it a byte loop in BPF
#endif
	}
	return b->dst[0] + b->dst[SIZE / 2] + b->dst[SIZE - 1];
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
