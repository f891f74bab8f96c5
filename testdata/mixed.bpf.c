// A mixed object: a kernel program and userspace programs sharing an
// array, a hash map and global data. The kernel program acts only for the
// thread named in target_tid.
#include "uebpf_helpers.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} hashed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

const volatile __u64 factor = 1; // .rodata, set before load
__u32 target_tid;                // .bss, set from Go
__u64 from_vm;                   // .bss, written by the VM program
__u64 seen_by_kernel;            // .bss, written by the kernel program

struct set_ctx {
	__u64 value;
};

// Kernel: on the target thread's next syscall, copy what the VM wrote,
// scaled by factor, and count the syscall.
SEC("raw_tp/sys_enter")
int on_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = bpf_get_current_pid_tgid();
	__u32 key = 0;
	__u64 *v, x;

	if (tid != target_tid)
		return 0;
	seen_by_kernel = from_vm * factor;
	v = bpf_map_lookup_elem(&shared, &key);
	x = v ? *v : 0;
	bpf_map_update_elem(&hashed, &tid, &x, BPF_ANY);
	key = 1;
	v = bpf_map_lookup_elem(&shared, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	bpf_ringbuf_output(&events, &x, sizeof(x), 0);
	return 0;
}

// VM: publish a value in .bss and in shared[0].
SEC("uebpf/set")
int set(struct set_ctx *c)
{
	__u32 key = 0;
	__u64 *v;

	from_vm = c->value;
	v = bpf_map_lookup_elem(&shared, &key);
	if (v)
		*v = c->value + 1;
	return 0;
}

// VM: what the kernel program saw.
SEC("uebpf/get")
int get(void *c)
{
	return seen_by_kernel;
}

// VM: the kernel's copy of shared[0] for tid, through the hash map.
SEC("uebpf/get_hashed")
int get_hashed(struct set_ctx *c)
{
	__u32 tid = c->value;
	__u64 *v = bpf_map_lookup_elem(&hashed, &tid);

	return v ? *v : -1;
}

char LICENSE[] SEC("license") = "GPL";
