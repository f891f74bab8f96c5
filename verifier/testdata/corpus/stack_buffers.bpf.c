//go:build ignore

// stack_buffers fills a buffer on the stack with a variable but bounded
// index, and hashes it.
#include "corpus.h"

SEC("uebpf")
int stack_fill(struct event *e)
{
	__u8 buf[64];
	__u32 h = 0;

	__builtin_memset(buf, 0, sizeof(buf));
	NO_UNROLL
	for (int i = 0; i < 4; i++) {
		__u32 idx = (e->arg[i] & 63);
		buf[idx] = i + 1;
	}
	NO_UNROLL
	for (int i = 0; i < 64; i++)
		h = h * 31 + buf[i];
	return h;
}

char LICENSE[] SEC("license") = "GPL";
