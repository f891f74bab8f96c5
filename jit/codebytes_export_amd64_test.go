package jit

import (
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/jit/internal/backend/arm64"
	"github.com/uebpf/uebpf/vm"
)

// CompileBytes returns the code the back end emits for p with opts, with
// a fixed blinding key and tag, for comparing generated code across
// commits.
func CompileBytes(p *vm.Program, opts Options) ([]byte, error) {
	return compileBytes(arch.Compile, p, opts)
}

// CompileBytesARM64 is CompileBytes for the arm64 back end, which
// compiles on any host: its code changes show without an arm64 machine.
func CompileBytesARM64(p *vm.Program, opts Options) ([]byte, error) {
	return compileBytes(arm64.Compile, p, opts)
}

func compileBytes(compile func(*vm.Program, backend.Options) (*backend.Code, error), p *vm.Program, opts Options) ([]byte, error) {
	var key uint64
	if opts.Blind {
		key = 0x5eed5eed5eed5eed | 1<<31
	}
	code, err := compile(p, opts.backend(key, 1))
	if err != nil {
		return nil, err
	}
	defer code.Release()
	return append([]byte(nil), code.Bytes...), nil
}
