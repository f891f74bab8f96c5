//go:build ignore

// prime: counts the primes below a bound by trial division.
#include "uebpf_helpers.h"

SEC("uebpf/bench")
__u64 prime(__u32 *bound)
{
	__u32 n = *bound, count = 0;

	for (__u32 i = 2; i < n; i++) {
		int is_prime = 1;
		for (__u32 d = 2; d * d <= i; d++) {
			if (i % d == 0) {
				is_prime = 0;
				break;
			}
		}
		count += is_prime;
	}
	return count;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
