package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// engines are the execution engines the commands can use, by name; "uebpf
// engines" lists them for CI, which runs the conformance suite on each.
// "auto" is not among them: it is one of these, chosen per platform.
var engines = map[string]conformance.Engine{
	"interpreter": conformance.Interpreter,
	// The JIT's checked mode; "jit-unchecked" is its verified mode, here
	// without a verifier: only for trusted programs such as the suite's.
	"jit":           jitEngine(jit.Options{}),
	"jit-unchecked": jitEngine(jit.Options{Unchecked: true}),
}

// defaultEngine is every command's default: the JIT where it exists.
const defaultEngine = "auto"

// engineFlag declares a command's --engine flag.
func engineFlag(fs *flag.FlagSet) *string {
	return fs.String("engine", defaultEngine, "run on engine `E`: auto (the JIT where it exists, else the interpreter), "+engineNames())
}

var enginesCmd = &command{
	name:    "engines",
	summary: "list the execution engines",
	detail: `Engines prints the names of the execution engines --engine accepts
besides auto, one a line, for scripts that run every engine (CI runs the
conformance suite on each).`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		return func(pos []string, st streams) error {
			if len(pos) != 0 {
				return usageError("engines takes no arguments")
			}
			fmt.Fprintln(st.stdout, strings.ReplaceAll(engineNames(), ", ", "\n"))
			return nil
		}
	},
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

// autoEngine runs a program on the JIT in checked mode where the JIT
// exists and compiles it, else on the interpreter.
func autoEngine(insns []asm.Instruction, helpers vm.Helpers) (conformance.Program, error) {
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
	if err != nil {
		return nil, err
	}
	if jit.Supported {
		if jp, err := jit.Compile(p, nil); err == nil {
			return jp, nil
		}
	}
	return p, nil
}

// engineNames lists the engines this platform has: the JIT's only where
// it has a back end.
func engineNames() string {
	var names []string
	for name := range engines {
		if strings.HasPrefix(name, "jit") && !jit.Supported {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func lookupEngine(name string) (conformance.Engine, error) {
	if name == "auto" {
		return autoEngine, nil
	}
	e, ok := engines[name]
	if !ok {
		return nil, usageError(fmt.Sprintf("unknown engine %q (have auto, %s)", name, engineNames()))
	}
	return e, nil
}

// objectEngine is the root package's engine of the name, for ELF objects,
// whose verified programs run unchecked on the JIT anyway.
func objectEngine(name string) (uebpf.Engine, error) {
	switch name {
	case "auto":
		return uebpf.EngineAuto, nil
	case "interpreter":
		return uebpf.EngineInterpreter, nil
	case "jit":
		return uebpf.EngineJIT, nil
	}
	return 0, usageError(fmt.Sprintf("unknown engine %q for an ELF object (have auto, interpreter, jit: verified programs run unchecked on the JIT)", name))
}
