//go:build !(linux && (amd64 || arm64))

package jit

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/uebpf/uebpf/vm"
)

// Supported reports whether Compile works on this platform.
const Supported = false

// Compile returns ErrUnsupportedArch: this platform has no JIT backend.
func Compile(p *vm.Program, opts *Options) (*Program, error) {
	return nil, fmt.Errorf("%w (%s/%s)", ErrUnsupportedArch, runtime.GOOS, runtime.GOARCH)
}

// Exec returns ErrUnsupportedArch.
func (p *Program) Exec(e *vm.Env) (uint64, error) { return 0, ErrUnsupportedArch }

func (p *Program) execFull(*vm.Env) (uint64, error) { return 0, ErrUnsupportedArch }

func run(*Program, []byte) (uint64, error) { return 0, ErrUnsupportedArch }

func runPointer(*Program, unsafe.Pointer, uintptr, uintptr) (uint64, error) {
	return 0, ErrUnsupportedArch
}

func unmapCode([]byte) {}
