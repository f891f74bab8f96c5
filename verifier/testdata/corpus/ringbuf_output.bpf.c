//go:build ignore

// ringbuf_output copies a record built on the stack into the ring.
#include "corpus.h"

struct sample {
	__u32 pid;
	__u32 len;
	__u64 addr;
	__u8 tag[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} samples SEC(".maps");

SEC("uebpf")
int output_sample(struct event *e)
{
	struct sample s = {};

	s.pid = e->pid;
	s.len = e->len;
	s.addr = e->addr;
	__builtin_memcpy(s.tag, "sample", 7);
	return bpf_ringbuf_output(&samples, &s, sizeof(s), 0);
}

char LICENSE[] SEC("license") = "GPL";
