// Package ringbuf is an example: a BPF program that sends records to Go
// through a ring buffer. See ringbuf.bpf.c and the example test.
package ringbuf

//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild ringbuf.bpf.c
