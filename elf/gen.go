package elf

// The test objects are committed; regenerate them with clang-19.
//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../examples/include -c testdata/loader.bpf.c -o testdata/loader.bpf.o
//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../examples/include -c testdata/errors.bpf.c -o testdata/errors.bpf.o
//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../examples/include -c testdata/core.bpf.c -o testdata/core.bpf.o
