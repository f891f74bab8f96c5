//go:build ignore

// queue pushes work items into a FIFO queue and pops them in another
// program.
#include "corpus.h"

struct item {
	__u32 pid;
	__u32 kind;
	__u64 ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 128);
	__type(value, struct item);
} work SEC(".maps");

SEC("uebpf")
int enqueue(struct event *e)
{
	struct item it = { .pid = e->pid, .kind = e->kind, .ts = e->ts };

	return bpf_map_push_elem(&work, &it, BPF_EXIST) == 0;
}

SEC("uebpf")
int dequeue(struct event *e)
{
	struct item it = {};
	__u64 sum = 0;

	for (int i = 0; i < 8; i++) {
		if (bpf_map_pop_elem(&work, &it))
			break;
		sum += it.ts;
	}
	return sum != 0;
}

char LICENSE[] SEC("license") = "GPL";
