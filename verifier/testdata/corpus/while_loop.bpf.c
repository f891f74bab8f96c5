//go:build ignore

// while_loop runs Collatz steps with an iteration cap and Euclid's gcd
// with a cap.
#include "corpus.h"

SEC("uebpf")
int collatz(struct event *e)
{
	__u64 n = e->arg[0] | 1;
	int steps = 0;

	while (n != 1 && steps < 200) {
		if (n & 1)
			n = 3 * n + 1;
		else
			n >>= 1;
		steps++;
	}
	return steps;
}

SEC("uebpf")
int gcd(struct event *e)
{
	__u64 a = e->arg[0], b = e->arg[1];

	for (int i = 0; i < 90 && b != 0; i++) {
		__u64 t = a % b;
		a = b;
		b = t;
	}
	return a;
}

char LICENSE[] SEC("license") = "GPL";
