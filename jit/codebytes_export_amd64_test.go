package jit

import (
	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// CompileBytes returns the code the back end emits for p with opts, with
// a fixed blinding key and tag, for comparing generated code across
// commits.
func CompileBytes(p *vm.Program, opts Options) ([]byte, error) {
	bo := backend.Options{
		Checked:       !opts.Unchecked,
		Blind:         opts.Blind,
		Tag:           1,
		TrapSlowPaths: opts.trapSlowPaths,
		AMD64:         backend.AMD64Options(opts.AMD64),
		ARM64:         backend.ARM64Options(opts.ARM64),
	}
	if opts.Blind {
		bo.Key = 0x5eed5eed5eed5eed | 1<<31
	}
	code, err := arch.Compile(p, &bo)
	if err != nil {
		return nil, err
	}
	defer code.Release()
	return append([]byte(nil), code.Bytes...), nil
}
