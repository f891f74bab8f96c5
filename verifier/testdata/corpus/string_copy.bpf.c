//go:build ignore

// string_copy copies a NUL-terminated string between map values, a byte at
// a time, and reverses it in place.
#include "corpus.h"

#define LEN 48

struct str {
	char s[LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct str);
} strs SEC(".maps");

SEC("uebpf")
int copy_str(struct event *e)
{
	__u32 k0 = 0, k1 = 1;
	struct str *src = bpf_map_lookup_elem(&strs, &k0);
	struct str *dst = bpf_map_lookup_elem(&strs, &k1);
	int i;

	if (!src || !dst)
		return -1;
	NO_UNROLL
	for (i = 0; i < LEN - 1; i++) {
		dst->s[i] = src->s[i];
		if (!src->s[i])
			break;
	}
	dst->s[LEN - 1] = 0;
	return i;
}

SEC("uebpf")
int reverse_str(struct event *e)
{
	__u32 k = 0;
	struct str *s = bpf_map_lookup_elem(&strs, &k);
	__u32 n = 0;

	if (!s)
		return 0;
	NO_UNROLL
	while (n < LEN && s->s[n])
		n++;
	NO_UNROLL
	for (__u32 i = 0; i < n / 2; i++) {
		__u32 j = n - 1 - i;
		if (j >= LEN)
			break;
		char t = s->s[i];
		s->s[i] = s->s[j];
		s->s[j] = t;
	}
	return n;
}

char LICENSE[] SEC("license") = "GPL";
