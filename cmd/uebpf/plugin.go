package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
)

// pluginCommand speaks the bpf_conformance plugin protocol: the optional
// memory comes as the first argument and the program on stdin, both in
// the protocol's hex format; r0 goes to stdout in hex.
func pluginCommand(args []string, stdin io.Reader, stdout io.Writer) error {
	engineName := "interpreter"
	var memHex string
	haveMem := false
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--interpret":
			engineName = "interpreter"
		case arg == "--jit":
			engineName = "jit"
		case arg == "--engine" && i+1 < len(args):
			i++
			engineName = args[i]
		case strings.HasPrefix(arg, "--engine="):
			engineName = strings.TrimPrefix(arg, "--engine=")
		case strings.HasPrefix(arg, "--"):
			return usageError(fmt.Sprintf("plugin: unknown option %q", arg))
		case !haveMem:
			memHex, haveMem = arg, true
		default:
			return usageError(fmt.Sprintf("plugin: unexpected argument %q", arg))
		}
	}
	engine, err := lookupEngine(engineName)
	if err != nil {
		return err
	}
	mem, err := conformance.ParsePluginHex(memHex)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	text, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("reading the program: %w", err)
	}
	code, err := conformance.ParsePluginHex(string(text))
	if err != nil {
		return fmt.Errorf("program: %w", err)
	}
	insns, err := asm.Decode(code)
	if err != nil {
		return err
	}
	p, err := engine(insns, conformance.Helpers())
	if err != nil {
		return err
	}
	r0, err := p.Run(mem)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%x\n", r0)
	return nil
}
