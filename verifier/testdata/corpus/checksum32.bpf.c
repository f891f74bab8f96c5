//go:build ignore

// checksum32 computes a ones'-complement checksum and an FNV-1a hash over
// a map value with 32-bit arithmetic (ALU32 and JMP32 with -mcpu=v3).
#include "corpus.h"

#define WORDS 32

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u16[WORDS]);
} packet SEC(".maps");

SEC("uebpf")
int csum(struct event *e)
{
	__u32 zero = 0, sum = 0;
	__u16 *p = bpf_map_lookup_elem(&packet, &zero);
	__u32 n = e->len;

	if (!p)
		return 0;
	if (n > WORDS)
		n = WORDS;
	NO_UNROLL
	for (__u32 i = 0; i < n; i++)
		sum += p[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("uebpf")
int fnv1a(struct event *e)
{
	__u32 zero = 0, h = 2166136261u;
	__u8 *p = bpf_map_lookup_elem(&packet, &zero);

	if (!p)
		return 0;
	NO_UNROLL
	for (int i = 0; i < WORDS * 2; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

char LICENSE[] SEC("license") = "GPL";
