package elf

// The test objects are committed; go generate rebuilds them (clang-19).
//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild testdata/*.bpf.c
