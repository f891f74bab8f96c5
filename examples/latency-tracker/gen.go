package tracker

//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../include -c tracker.bpf.c -o tracker.bpf.o
//go:generate go run ./internal/gensyscalls -in /usr/include/x86_64-linux-gnu/asm/unistd_64.h -out syscalls_x86_64.go
