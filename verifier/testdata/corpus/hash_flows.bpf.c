//go:build ignore

// hash_flows tracks flows in a hash map: insert on first sight, update after.
#include "corpus.h"

struct flow_key {
	__u32 pid;
	__u32 kind;
	__u64 addr;
};

struct flow {
	__u64 first_ts;
	__u64 last_ts;
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct flow_key);
	__type(value, struct flow);
} flows SEC(".maps");

SEC("uebpf")
int track_flow(struct event *e)
{
	struct flow_key key = { .pid = e->pid, .kind = e->kind, .addr = e->addr };
	struct flow *f = bpf_map_lookup_elem(&flows, &key);

	if (f) {
		f->last_ts = e->ts;
		__sync_fetch_and_add(&f->packets, 1);
		__sync_fetch_and_add(&f->bytes, e->len);
		return 1;
	}
	struct flow nf = { .first_ts = e->ts, .last_ts = e->ts, .packets = 1, .bytes = e->len };
	bpf_map_update_elem(&flows, &key, &nf, BPF_NOEXIST);
	return 0;
}

SEC("uebpf")
int forget_flow(struct event *e)
{
	struct flow_key key = { .pid = e->pid, .kind = e->kind, .addr = e->addr };

	return bpf_map_delete_elem(&flows, &key) == 0;
}

char LICENSE[] SEC("license") = "GPL";
