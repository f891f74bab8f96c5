// Kernel programs of the types AttachKernel attaches besides raw
// tracepoints: a tracepoint and a kprobe, both counting the getppid calls
// of one thread, and a userspace program reading the counts.
#include "uebpf_helpers.h"

__u32 target_tid; // .bss, set from Go
__u64 tp_calls;   // .bss, counted by the tracepoint program
__u64 kp_calls;   // .bss, counted by the kprobe program

SEC("tracepoint/syscalls/sys_enter_getppid")
int tp_getppid(void *ctx)
{
	if ((__u32)bpf_get_current_pid_tgid() == target_tid)
		__sync_fetch_and_add(&tp_calls, 1);
	return 0;
}

SEC("kprobe/__x64_sys_getppid")
int kp_getppid(void *ctx)
{
	if ((__u32)bpf_get_current_pid_tgid() == target_tid)
		__sync_fetch_and_add(&kp_calls, 1);
	return 0;
}

// VM: both counts, the kprobe's in bits 16-31.
SEC("uebpf/counts")
int counts(void *ctx)
{
	return (tp_calls & 0xffff) | (kp_calls & 0xffff) << 16;
}

char LICENSE[] SEC("license") = "GPL";
