//go:build !amd64

package jit_test

import (
	"testing"

	"github.com/uebpf/uebpf/jit"
)

// hasJumpTable: jump tables are an amd64 optimisation (see
// jit.Optimised), and only its code is disassembled.
func hasJumpTable(*testing.T, *jit.Program) bool { return false }

// hasSetcc: 0/1 selects as a setcc are an amd64 optimisation.
func hasSetcc(*testing.T, string) bool { return false }

// countInsns returns the number of machine instructions in code: A64
// instructions are 4 bytes.
func countInsns(code []byte) (int, error) { return len(code) / 4, nil }
