//go:build ignore

// parse_header walks type-length-value records in a 256-byte buffer kept in
// a map value, with variable but bounded offsets.
#include "corpus.h"

#define BUF 256

struct buf {
	__u8 data[BUF];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct buf);
} scratch SEC(".maps");

SEC("uebpf")
int parse_tlv(struct event *e)
{
	__u32 zero = 0;
	struct buf *b = bpf_map_lookup_elem(&scratch, &zero);
	__u32 off = 0, found = 0;

	if (!b)
		return 0;
	NO_UNROLL
	for (int i = 0; i < 16; i++) {
		if (off > BUF - 2)
			break;
		__u8 type = b->data[off];
		__u8 len = b->data[off + 1];
		if (type == e->kind)
			found++;
		off += 2 + len;
	}
	return found;
}

SEC("uebpf")
int read_at(struct event *e)
{
	__u32 zero = 0;
	struct buf *b = bpf_map_lookup_elem(&scratch, &zero);
	__u64 off = e->arg[0];

	if (!b || off > BUF - 8)
		return 0;
	__u64 v;
	__builtin_memcpy(&v, &b->data[off], 8);
	return v & 0xff;
}

char LICENSE[] SEC("license") = "GPL";
