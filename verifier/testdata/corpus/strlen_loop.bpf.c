//go:build ignore

// strlen_loop measures and upper-cases a name kept in a map value, with
// bounded loops over the bytes.
#include "corpus.h"

#define NAME_LEN 32

struct name {
	char s[NAME_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct name);
} names SEC(".maps");

SEC("uebpf")
int name_len(struct event *e)
{
	__u32 key = e->kind & 3;
	struct name *n = bpf_map_lookup_elem(&names, &key);
	int i;

	if (!n)
		return -1;
	NO_UNROLL
	for (i = 0; i < NAME_LEN; i++)
		if (n->s[i] == 0)
			break;
	return i;
}

SEC("uebpf")
int name_upper(struct event *e)
{
	__u32 key = e->kind & 3;
	struct name *n = bpf_map_lookup_elem(&names, &key);
	int changed = 0;

	if (!n)
		return 0;
	NO_UNROLL
	for (int i = 0; i < NAME_LEN; i++) {
		char c = n->s[i];
		if (c == 0)
			break;
		if (c >= 'a' && c <= 'z') {
			n->s[i] = c - 'a' + 'A';
			changed++;
		}
	}
	return changed;
}

char LICENSE[] SEC("license") = "GPL";
