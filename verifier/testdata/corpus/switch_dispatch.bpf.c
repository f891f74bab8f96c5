//go:build ignore

// switch_dispatch computes a cost from the event kind with a switch.
#include "corpus.h"

SEC("uebpf")
int cost(struct event *e)
{
	__u64 c;

	switch (e->kind) {
	case 0:
		c = 1;
		break;
	case 1:
		c = e->len;
		break;
	case 2:
		c = e->len * 2 + 3;
		break;
	case 3:
		c = e->arg[0] >> 3;
		break;
	case 4:
		c = e->arg[1] ^ e->arg[2];
		break;
	case 7:
		c = e->ts & 0xfff;
		break;
	case 9:
		c = 100;
		break;
	default:
		c = 0;
	}
	return c;
}

char LICENSE[] SEC("license") = "GPL";
