//go:build ignore

// switch: a dense switch over 32 cases in a loop over 1024 bytes.
#include "uebpf_helpers.h"

#define N 1024

/* The context: the program reads it whole, so its type gives the verifier
 * its size. */
struct bytes {
	__u8 b[N];
};

SEC("uebpf/bench")
__u64 switch_loop(struct bytes *in)
{
	const __u8 *data = in->b;
	__u64 acc = 1;

	for (int i = 0; i < N; i++) {
		switch (data[i] & 31) {
		case 0: acc += 3; break;
		case 1: acc ^= 0x55; break;
		case 2: acc *= 3; break;
		case 3: acc -= 7; break;
		case 4: acc <<= 1; break;
		case 5: acc >>= 1; break;
		case 6: acc |= 0x100; break;
		case 7: acc &= 0xffffff; break;
		case 8: acc += i; break;
		case 9: acc ^= i; break;
		case 10: acc -= i; break;
		case 11: acc += acc >> 3; break;
		case 12: acc ^= acc << 2; break;
		case 13: acc += 11; break;
		case 14: acc *= 5; break;
		case 15: acc ^= 0xabcd; break;
		case 16: acc += 17; break;
		case 17: acc -= 19; break;
		case 18: acc |= 1; break;
		case 19: acc &= ~1ULL; break;
		case 20: acc += data[i]; break;
		case 21: acc ^= data[i]; break;
		case 22: acc *= 7; break;
		case 23: acc -= data[i]; break;
		case 24: acc += acc; break;
		case 25: acc ^= acc >> 7; break;
		case 26: acc += 23; break;
		case 27: acc -= 29; break;
		case 28: acc ^= 0x1234; break;
		case 29: acc += i * 3; break;
		case 30: acc *= 9; break;
		default: acc -= 1; break;
		}
	}
	return acc;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
