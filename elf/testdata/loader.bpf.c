// Exercises what the ELF loader must handle: BTF and legacy maps, global
// data in every kind of section, bpf-to-bpf calls, callbacks, prog arrays
// filled from .values, and programs for both the VM and the kernel.
#include "uebpf_helpers.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, UEBPF_PIN_BY_NAME);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps");

// A legacy (pre-BTF) map definition, as in libbpf's struct bpf_map_def.
struct legacy_map_def {
	unsigned int type, key_size, value_size, max_entries, map_flags;
};
struct legacy_map_def legacy SEC("maps") = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = 4,
	.value_size = 8,
	.max_entries = 2,
};

const volatile __u64 threshold = 10;       // .rodata, set from Go before load
__u64 data_init = 7;                       // .data
__u64 hits;                                // .bss
__u64 custom SEC(".data.custom") = 3;      // .data.custom
const char greeting[] = "hello, uebpf";    // .rodata

struct ctx {
	__u64 value;
	__u32 key;
	__u32 pad;
};

static __noinline __u64 twice(__u64 v)
{
	return v * 2;
}

__noinline __u64 add_data(__u64 v)
{
	return v + data_init + custom;
}

// above: global, non-static function, resolved like a static one.
SEC("uebpf/tracepoint/calls")
int calls(struct ctx *c)
{
	return twice(c->value) + add_data(1); // 2*v + 1 + 7 + 3
}

SEC("uebpf/tracepoint/globals")
int globals(struct ctx *c)
{
	hits++;
	if (c->value > threshold)
		return 1;
	return greeting[1]; // 'e'
}

SEC("uebpf/maps")
int maps_prog(struct ctx *c)
{
	__u32 key = c->key;
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(&counts, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&counts, &key, &one, BPF_ANY);

	key = 1;
	v = bpf_map_lookup_elem(&legacy, &key);
	if (v)
		*v += 5;
	v = bpf_map_lookup_elem(&slots, &key);
	if (v)
		*v += 2;
	return 0;
}

static long add_index(__u32 index, void *data)
{
	*(__u64 *)data += index;
	return 0;
}

SEC("uebpf")
int callback(struct ctx *c)
{
	__u64 sum = 0;
	bpf_loop(5, add_index, &sum, 0); // 0+1+2+3+4
	return sum;
}

SEC("uebpf/tail/zero")
int tail_zero(struct ctx *c)
{
	return 100;
}

SEC("uebpf/tail/one")
int tail_one(struct ctx *c)
{
	return 101;
}

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(__u32));
	__array(values, int(void *));
} jump_table SEC(".maps") = {
	.values = {
		[0] = (void *)&tail_zero,
		[1] = (void *)&tail_one,
	},
};

SEC("uebpf/tail")
int dispatch(struct ctx *c)
{
	bpf_tail_call(c, &jump_table, c->key);
	return 99;
}

// Kernel programs: kept for the kernel bridge, not loaded into the VM.
SEC("tracepoint/syscalls/sys_enter_openat")
int kernel_openat(void *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&slots, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("xdp")
int kernel_xdp(void *ctx)
{
	return 2; // XDP_PASS
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
