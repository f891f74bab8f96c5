// Package filter is an example: a BPF program that counts slow system calls
// per process in a hash map. See filter.bpf.c and the example test.
package filter

//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild filter.bpf.c
