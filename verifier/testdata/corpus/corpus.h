/* corpus.h: what the verifier corpus programs share. Every program gets a
 * struct event (64 bytes, read-only) as its context, so that each one can
 * also be loaded into Linux as a raw tracepoint program, whose context is
 * 12 read-only u64 arguments, for the kernel agreement test. */
#ifndef CORPUS_H
#define CORPUS_H

#include "uebpf_helpers.h"

struct event {
	__u32 pid;
	__u32 tid;
	__u32 kind;
	__u32 len;
	__u64 ts;
	__u64 addr;
	__u64 arg[4];
};

#define CTX_SIZE sizeof(struct event)

#define NO_UNROLL _Pragma("clang loop unroll(disable)")

#endif
