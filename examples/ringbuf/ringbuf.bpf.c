//go:build ignore

// ringbuf sends a record to Go for every failed request: the application
// fires it with a struct request, Go reads struct record from the ring.
#include "uebpf_helpers.h"

struct request {
	__u32 pid;
	__u32 status;
	__u64 bytes;
};

struct record {
	__u32 pid;
	__u32 status;
	__u64 bytes;
	__u64 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 4096);
} failures SEC(".maps");

__u64 seq; // .bss: records sent so far

SEC("uebpf/tracepoint/http_request")
int report_failure(struct request *r)
{
	struct record *rec;

	if (r->status < 500)
		return 0;
	rec = bpf_ringbuf_reserve(&failures, sizeof(*rec), 0);
	if (!rec)
		return -1; // the ring is full: counted as a drop
	rec->pid = r->pid;
	rec->status = r->status;
	rec->bytes = r->bytes;
	rec->seq = __sync_fetch_and_add(&seq, 1);
	bpf_ringbuf_submit(rec, 0);
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
