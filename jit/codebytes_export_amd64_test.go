package jit

import "github.com/uebpf/uebpf/vm"

// CompileBytes returns the code the back end emits for p with opts, with
// a fixed blinding key and tag, for comparing generated code across
// commits.
func CompileBytes(p *vm.Program, opts Options) ([]byte, error) {
	var key uint64
	if opts.Blind {
		key = 0x5eed5eed5eed5eed | 1<<31
	}
	code, err := arch.Compile(p, opts.backend(key, 1))
	if err != nil {
		return nil, err
	}
	defer code.Release()
	return append([]byte(nil), code.Bytes...), nil
}
