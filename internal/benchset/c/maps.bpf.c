//go:build ignore

// map_array_lookup and map_hash_update: helper-heavy loops. hash_lookup and
// array_lookup look up each of 256 keys of the context; hash_lookup_one and
// array_lookup_one one key.
#include "uebpf_helpers.h"

#define LOOPS 1000
#define KEYS 256

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 20);
	__type(key, __u64);
	__type(value, __u64);
} big_hash SEC(".maps");

/* The contexts of the lookup loops: their types give the verifier their
 * sizes. */
struct keys64 {
	__u64 k[KEYS];
};

struct keys32 {
	__u32 k[KEYS];
};

SEC("uebpf/bench")
__u64 map_array_lookup(void *ctx)
{
	__u64 sum = 0;

	for (__u32 i = 0; i < LOOPS; i++) {
		__u32 key = i & 1023;
		__u64 *v = bpf_map_lookup_elem(&array, &key);
		if (v)
			sum += *v;
	}
	return sum;
}

SEC("uebpf/bench")
__u64 map_hash_update(void *ctx)
{
	for (__u32 i = 0; i < LOOPS; i++) {
		__u32 key = i & 1023;
		__u64 value = i;
		bpf_map_update_elem(&hash, &key, &value, BPF_ANY);
	}
	return 0;
}

// The context holds KEYS keys; each is looked up once.
SEC("uebpf/bench")
__u64 hash_lookup(struct keys64 *keys)
{
	__u64 sum = 0;

	for (int i = 0; i < KEYS; i++) {
		__u64 *v = bpf_map_lookup_elem(&big_hash, &keys->k[i]);
		if (v)
			sum += *v;
	}
	return sum;
}

SEC("uebpf/bench")
__u64 array_lookup(struct keys32 *keys)
{
	__u64 sum = 0;

	for (int i = 0; i < KEYS; i++) {
		__u64 *v = bpf_map_lookup_elem(&array, &keys->k[i]);
		if (v)
			sum += *v;
	}
	return sum;
}

// One lookup per run: compare with simple for the cost of the lookup alone.
SEC("uebpf/bench")
__u64 hash_lookup_one(__u64 *key)
{
	__u64 *v = bpf_map_lookup_elem(&big_hash, key);
	return v ? *v : 0;
}

SEC("uebpf/bench")
__u64 array_lookup_one(__u32 *key)
{
	__u64 *v = bpf_map_lookup_elem(&array, key);
	return v ? *v : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
