package verifier

// The corpus of clang-built programs the tests verify (testdata/corpus):
// the committed objects are rebuilt from their sources with
//
//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild testdata/corpus/*.bpf.c
