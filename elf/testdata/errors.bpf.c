// Programs that must fail to load, each for one reason. Tests keep one
// program of the spec at a time.
#include "uebpf_helpers.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} values SEC(".maps");

extern void bpf_rcu_read_lock(void) __attribute__((section(".ksyms")));

SEC("uebpf/gpl")
int gpl_helper(void *ctx)
{
	bpf_printk("hi");
	return 0;
}

SEC("uebpf/missing_helper")
int missing_helper(void *ctx)
{
	char comm[16];
	bpf_get_current_comm(comm, sizeof(comm));
	return comm[0];
}

SEC("uebpf/perf")
int perf_user(void *ctx)
{
	__u64 v = 1;
	bpf_perf_event_output(ctx, &events, 0, &v, sizeof(v));
	return 0;
}

SEC("uebpf/kfunc")
int kfunc_user(void *ctx)
{
	bpf_rcu_read_lock();
	return 0;
}

SEC("uebpf/values")
int values_user(void *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&values, &key);
	return v ? *v : 0;
}

// A kernel program may use a map that userspace cannot create.
SEC("tracepoint/sched/sched_switch")
int perf_kernel(void *ctx)
{
	__u64 v = 1;
	bpf_perf_event_output(ctx, &events, 0xffffffffULL, &v, sizeof(v));
	return 0;
}

char LICENSE[] SEC("license") = "Proprietary";
