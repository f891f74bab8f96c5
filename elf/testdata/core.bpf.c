// CO-RE: the program reads struct event through relocations, so it runs
// against whatever layout the application's BTF gives the struct.
#include "uebpf_helpers.h"

struct event {
	__u32 pid;
	__u64 bytes;
	__u32 flags;
} __attribute__((preserve_access_index));

SEC("uebpf/tracepoint/event")
int read_event(struct event *e)
{
	return e->bytes + e->pid;
}

SEC("uebpf/tracepoint/flags")
int read_flags(struct event *e)
{
	if (__builtin_preserve_field_info(e->flags, 2 /* BPF_FIELD_EXISTS */))
		return e->flags;
	return 1000;
}

enum level {
	LEVEL_LOW = 1,
	LEVEL_HIGH = 0x100000000ULL, // 64-bit: its relocation is an lddw
};

SEC("uebpf/tracepoint/enum")
__u64 read_enum(void *ctx)
{
	if (__builtin_preserve_enum_value(*(typeof(enum level) *)LEVEL_HIGH, 0 /* BPF_ENUMVAL_EXISTS */))
		return __builtin_preserve_enum_value(*(typeof(enum level) *)LEVEL_HIGH, 1 /* BPF_ENUMVAL_VALUE */);
	return 7;
}

char LICENSE[] SEC("license") = "GPL";
