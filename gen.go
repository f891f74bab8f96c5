package uebpf

//go:generate clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I examples/include -c testdata/apphelper.bpf.c -o testdata/apphelper.bpf.o
