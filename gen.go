package uebpf

//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild testdata/*.bpf.c
