//go:build ignore

// probe_read copies a user string and a user struct named by the event's
// address, and reports them.
#include "corpus.h"

struct report {
	__u64 addr;
	__s64 len;
	char path[64];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8192);
} reports SEC(".maps");

SEC("uebpf")
int read_path(struct event *e)
{
	struct report *r = bpf_ringbuf_reserve(&reports, sizeof(*r), 0);

	if (!r)
		return 0;
	r->addr = e->addr;
	r->len = bpf_probe_read_user_str(r->path, sizeof(r->path), (void *)e->addr);
	if (r->len <= 0) {
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	bpf_ringbuf_submit(r, 0);
	return 1;
}

struct pair {
	__u64 a, b;
};

SEC("uebpf")
int read_pair(struct event *e)
{
	struct pair p;

	if (bpf_probe_read_user(&p, sizeof(p), (void *)e->addr))
		return 0;
	return p.a + p.b;
}

char LICENSE[] SEC("license") = "GPL";
