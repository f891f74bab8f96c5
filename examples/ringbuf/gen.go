// Package ringbuf is an example: a BPF program that sends records to Go
// through a ring buffer. See ringbuf.bpf.c and the example test.
package ringbuf

//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../include -c ringbuf.bpf.c -o ringbuf.bpf.o
