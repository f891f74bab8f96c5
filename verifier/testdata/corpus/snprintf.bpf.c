//go:build ignore

// snprintf formats a line per event into a ring buffer record.
#include "corpus.h"

struct line {
	char text[64];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} lines SEC(".maps");

SEC("uebpf")
int format_line(struct event *e)
{
	static const char fmt[] = "pid %u kind %u len %u";
	__u64 args[3] = { e->pid, e->kind, e->len };
	struct line *l = bpf_ringbuf_reserve(&lines, sizeof(*l), 0);
	long n;

	if (!l)
		return 0;
	n = bpf_snprintf(l->text, sizeof(l->text), fmt, args, sizeof(args));
	if (n < 0) {
		bpf_ringbuf_discard(l, 0);
		return 0;
	}
	bpf_ringbuf_submit(l, 0);
	return n;
}

SEC("uebpf")
int format_stack(struct event *e)
{
	static const char fmt[] = "%llx";
	char buf[24];
	__u64 args[1] = { e->addr };

	return bpf_snprintf(buf, sizeof(buf), fmt, args, sizeof(args));
}

char LICENSE[] SEC("license") = "GPL";
