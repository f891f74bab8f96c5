// Package tailcall is an example: a dispatcher that tail-calls one handler
// per operation through a program array. See tailcall.bpf.c and the example
// test.
package tailcall

//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../include -c tailcall.bpf.c -o tailcall.bpf.o
