package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// engines are the execution engines the commands can use, by name.
var engines = map[string]conformance.Engine{
	"interpreter": conformance.Interpreter,
	// The JIT's checked mode; "jit-unchecked" is its verified mode, here
	// without a verifier: only for trusted programs such as the suite's.
	"jit":           jitEngine(jit.Options{}),
	"jit-unchecked": jitEngine(jit.Options{Unchecked: true}),
}

// jitEngine loads programs with the JIT compiled with opts.
func jitEngine(opts jit.Options) conformance.Engine {
	return func(insns []asm.Instruction, helpers vm.Helpers) (conformance.Program, error) {
		p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
		if err != nil {
			return nil, err
		}
		return jit.Compile(p, &opts)
	}
}

func engineNames() string {
	var names []string
	for name := range engines {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func lookupEngine(name string) (conformance.Engine, error) {
	e, ok := engines[name]
	if !ok {
		return nil, usageError(fmt.Sprintf("unknown engine %q (have %s)", name, engineNames()))
	}
	return e, nil
}
