package examples_test

import (
	"testing"

	"github.com/uebpf/uebpf/internal/bpfbuild"
)

// The examples' sources still compile with clang-19 (CI has it).
func TestSourcesBuild(t *testing.T) {
	bpfbuild.CheckSources(t, "*/*.bpf.c")
}
