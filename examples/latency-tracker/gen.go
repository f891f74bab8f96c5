//go:build linux

package tracker

//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild tracker.bpf.c
//go:generate go run ./internal/gensyscalls -in /usr/include/x86_64-linux-gnu/asm/unistd_64.h -out syscalls_x86_64.go
