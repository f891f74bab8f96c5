//go:build ignore

// strcmp_fail and strcmp_full: compare two NUL-terminated strings of the
// context. The inputs make the first differ at once and the second run to
// the end of two equal 4 KiB strings.
#include "uebpf_helpers.h"

#define SIZE 4096

struct strings {
	char a[SIZE];
	char b[SIZE];
};

static __always_inline int compare(const char *a, const char *b)
{
	for (int i = 0; i < SIZE; i++) {
		if (a[i] != b[i])
			return (unsigned char)a[i] - (unsigned char)b[i];
		if (a[i] == 0)
			return 0;
	}
	return 0;
}

SEC("uebpf/bench")
int strcmp_fail(struct strings *s)
{
	return compare(s->a, s->b);
}

SEC("uebpf/bench")
int strcmp_full(struct strings *s)
{
	return compare(s->a, s->b);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
