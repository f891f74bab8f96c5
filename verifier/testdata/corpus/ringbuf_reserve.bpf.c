//go:build ignore

// ringbuf_reserve sends a record per event, discarding the ones that turn
// out to be uninteresting after the record was filled.
#include "corpus.h"

struct record {
	__u32 pid;
	__u32 kind;
	__u64 ts;
	__u64 args[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} events SEC(".maps");

SEC("uebpf")
int emit_record(struct event *e)
{
	struct record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r)
		return -1;
	r->pid = e->pid;
	r->kind = e->kind;
	r->ts = e->ts;
	for (int i = 0; i < 4; i++)
		r->args[i] = e->arg[i];
	if (r->args[0] == 0 && r->args[1] == 0) {
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	bpf_ringbuf_submit(r, 0);
	return 1;
}

SEC("uebpf")
int emit_small(struct event *e)
{
	__u64 *r;

	if (e->kind != 3)
		return 0;
	r = bpf_ringbuf_reserve(&events, 8, 0);
	if (!r)
		return 0;
	*r = e->ts;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > 0;
}

char LICENSE[] SEC("license") = "GPL";
