//go:build ignore

// simple: the cost of entering and leaving a program.
#include "uebpf_helpers.h"

SEC("uebpf/bench")
int simple(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
