//go:build ignore

// str_len: the length of a NUL-terminated string of the context, bounded
// by its 4 KiB; the input is 4095 bytes and a NUL. (Not named strlen: the
// native build links it with the C library's.)
#include "uebpf_helpers.h"

#define SIZE 4096

struct string {
	char s[SIZE];
};

SEC("uebpf/bench")
int str_len(struct string *str)
{
	int i;

	for (i = 0; i < SIZE; i++)
		if (str->s[i] == 0)
			break;
	return i;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
