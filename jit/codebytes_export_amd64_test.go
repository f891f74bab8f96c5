package jit

import "github.com/uebpf/uebpf/vm"

// CompileBytes returns the code the compiler emits for p with opts, with
// a fixed blinding key and tag, for comparing generated code across
// commits.
func CompileBytes(p *vm.Program, opts Options) ([]byte, error) {
	var key uint64
	if opts.Blind {
		key = 0x5eed5eed5eed5eed | 1<<31
	}
	c := newCompiler(p, &opts, hostFeatures(&opts), key, 1)
	defer c.release()
	code, err := c.compile()
	return append([]byte(nil), code...), err
}
