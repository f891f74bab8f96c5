//go:build ignore

// bpf_loop_sum sums the first n squares with bpf_loop, the state in a
// struct on the stack.
#include "corpus.h"

struct sum_ctx {
	__u64 sum;
	__u64 limit;
};

static long add_square(__u32 i, void *data)
{
	struct sum_ctx *c = data;

	c->sum += (__u64)i * i;
	if (c->sum > c->limit)
		return 1;
	return 0;
}

SEC("uebpf")
int loop_squares(struct event *e)
{
	struct sum_ctx c = { .sum = 0, .limit = e->arg[0] };
	long n;

	n = bpf_loop(e->len & 1023, add_square, &c, 0);
	if (n < 0)
		return 0;
	return c.sum;
}

char LICENSE[] SEC("license") = "GPL";
