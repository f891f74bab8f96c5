//go:build linux && (amd64 || arm64)

package jit

import "github.com/uebpf/uebpf/jit/internal/execmem"

// Machine code lives in memory package execmem hands out (W^X, shared
// pages, no mprotect per program).
func mapCode(code []byte) ([]byte, error) { return execmem.Map(code) }

func unmapCode(mem []byte) { execmem.Unmap(mem) }
