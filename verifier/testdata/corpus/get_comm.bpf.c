//go:build ignore

// get_comm records the name of the task per pid, and counts names that
// start with a digit.
#include "corpus.h"

struct comm {
	char name[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 512);
	__type(key, __u32);
	__type(value, struct comm);
} comms SEC(".maps");

SEC("uebpf")
int save_comm(struct event *e)
{
	struct comm c;
	__u32 pid = e->pid;

	if (bpf_get_current_comm(c.name, sizeof(c.name)))
		return 0;
	bpf_map_update_elem(&comms, &pid, &c, BPF_ANY);
	return c.name[0] >= '0' && c.name[0] <= '9';
}

char LICENSE[] SEC("license") = "GPL";
