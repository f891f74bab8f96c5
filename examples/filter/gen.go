// Package filter is an example: a BPF program that counts slow system calls
// per process in a hash map. See filter.bpf.c and the example test.
package filter

//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../include -c filter.bpf.c -o filter.bpf.o
