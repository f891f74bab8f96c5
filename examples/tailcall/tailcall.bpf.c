//go:build ignore

// tailcall is a calculator: dispatch tail-calls the handler of the
// operation's code through a program array that Go fills.
#include "uebpf_helpers.h"

struct op {
	__u32 code;
	__u32 pad;
	__s64 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 8);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} handlers SEC(".maps");

SEC("uebpf/op/add")
__s64 op_add(struct op *o) { return o->a + o->b; }

SEC("uebpf/op/sub")
__s64 op_sub(struct op *o) { return o->a - o->b; }

SEC("uebpf/op/mul")
__s64 op_mul(struct op *o) { return o->a * o->b; }

SEC("uebpf/dispatch")
__s64 dispatch(struct op *o)
{
	bpf_tail_call(o, &handlers, o->code);
	return -1; // no handler for this code
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
