//go:build !(linux && amd64)

package uebpf

import (
	"unsafe"

	"github.com/uebpf/uebpf/jit"
)

func run(p *Program, ctx unsafe.Pointer, n uintptr) (uint64, error) {
	return p.runSlow(unsafe.Slice((*byte)(ctx), n))
}

func jitPath(*jit.Program) (plain, stackless bool) { return false, false }
