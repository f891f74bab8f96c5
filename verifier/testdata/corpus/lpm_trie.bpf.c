//go:build ignore

// lpm_trie classifies IPv4 addresses by longest prefix match.
#include "corpus.h"

struct ipv4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 256);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ipv4_key);
	__type(value, __u32);
} routes SEC(".maps");

SEC("uebpf")
int classify(struct event *e)
{
	struct ipv4_key key = { .prefixlen = 32 };
	__u32 a = (__u32)e->addr;
	__u32 *class;

	key.addr[0] = a >> 24;
	key.addr[1] = a >> 16;
	key.addr[2] = a >> 8;
	key.addr[3] = a;
	class = bpf_map_lookup_elem(&routes, &key);
	return class ? *class : 0;
}

SEC("uebpf")
int add_route(struct event *e)
{
	struct ipv4_key key = { .prefixlen = e->len & 31 };
	__u32 class = e->kind;

	__builtin_memcpy(key.addr, &e->arg[0], 4);
	return bpf_map_update_elem(&routes, &key, &class, BPF_ANY);
}

char LICENSE[] SEC("license") = "GPL";
