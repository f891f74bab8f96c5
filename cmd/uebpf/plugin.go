package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
)

var pluginCmd = &command{
	name:    "plugin",
	args:    "[MEMHEX]",
	summary: "run one program as a bpf_conformance plugin",
	detail: `Plugin speaks the bpf_conformance plugin protocol: the program's memory
comes as the first argument and the program on standard input, both in the
protocol's hex format ("0a 0b 0c"); r0 goes to standard output in hex.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		engineName := engineFlag(fs)
		interpret := fs.Bool("interpret", false, "use the interpreter (as --engine interpreter)")
		useJIT := fs.Bool("jit", false, "use the JIT in checked mode (as --engine jit)")
		return func(pos []string, st streams) error {
			if len(pos) > 1 {
				return usageError(fmt.Sprintf("unexpected argument %q", pos[1]))
			}
			if *interpret && *useJIT {
				return usageError("--interpret and --jit exclude each other")
			}
			name := *engineName
			if *interpret {
				name = "interpreter"
			} else if *useJIT {
				name = "jit"
			}
			engine, err := lookupEngine(name)
			if err != nil {
				return err
			}
			var memHex string
			if len(pos) == 1 {
				memHex = pos[0]
			}
			mem, err := conformance.ParsePluginHex(memHex)
			if err != nil {
				return badArgument{fmt.Errorf("memory: %w", err)}
			}
			text, err := io.ReadAll(st.stdin)
			if err != nil {
				return fmt.Errorf("reading the program: %w", err)
			}
			code, err := conformance.ParsePluginHex(string(text))
			if err != nil {
				return fmt.Errorf("program: %w", err)
			}
			insns, err := asm.Decode(code)
			if err != nil {
				return fmt.Errorf("program: %w", err)
			}
			p, err := engine(insns, conformance.Helpers())
			if err != nil {
				return err
			}
			r0, err := p.Run(mem)
			if err != nil {
				return err
			}
			fmt.Fprintf(st.stdout, "%x\n", r0)
			return nil
		}
	},
}
