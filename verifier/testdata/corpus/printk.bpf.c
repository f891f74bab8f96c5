//go:build ignore

// printk traces unusual events with bpf_printk (a stack format string).
#include "corpus.h"

SEC("uebpf")
int trace_big(struct event *e)
{
	if (e->len < 4096)
		return 0;
	bpf_printk("big event pid=%d len=%d", e->pid, e->len);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
