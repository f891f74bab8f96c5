// Package tailcall is an example: a dispatcher that tail-calls one handler
// per operation through a program array. See tailcall.bpf.c and the example
// test.
package tailcall

//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild tailcall.bpf.c
