package elf_test

import (
	"testing"

	"github.com/uebpf/uebpf/internal/bpfbuild"
)

// The test objects' sources still compile with clang-19 (CI has it).
func TestSourcesBuild(t *testing.T) {
	bpfbuild.CheckSources(t, "testdata/*.bpf.c")
}
