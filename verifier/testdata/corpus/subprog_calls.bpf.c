//go:build ignore

// subprog_calls splits the work into non-inlined functions that pass
// pointers to their stacks to each other.
#include "corpus.h"

struct acc {
	__u64 sum;
	__u64 xor;
	__u32 n;
};

static __noinline void acc_add(struct acc *a, __u64 v)
{
	a->sum += v;
	a->xor ^= v;
	a->n++;
}

static __noinline __u64 acc_mix(const struct acc *a)
{
	return a->sum * 31 + a->xor + a->n;
}

static __noinline __u64 digest(struct event *e)
{
	struct acc a = {};

	acc_add(&a, e->pid);
	acc_add(&a, e->ts);
	for (int i = 0; i < 4; i++)
		acc_add(&a, e->arg[i]);
	return acc_mix(&a);
}

SEC("uebpf")
int digest_event(struct event *e)
{
	return digest(e) & 0xffff;
}

char LICENSE[] SEC("license") = "GPL";
