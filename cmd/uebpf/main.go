// Command uebpf runs, disassembles and tests eBPF programs with the uebpf
// runtime.
//
//	uebpf run [--engine E] [--mem FILE | --mem-hex HEX] [--repeat N] [--program NAME] [--no-verify] PROGRAM
//	uebpf disasm PROGRAM
//	uebpf conformance [--engine E] DIR
//	uebpf plugin [MEMHEX] [--interpret | --engine E]
//	uebpf engines
//	uebpf filter eval --fields SPEC [--engine interpreter|jit] [--] EXPR
//	uebpf filter explain --fields SPEC [--] EXPR
//	uebpf tracepoint header --name PROVIDER:NAME --fields SPEC [-o FILE]
//
// PROGRAM is raw bytecode (8-byte little-endian slots), a file in the
// conformance suite's assembler dialect, or a clang-built ELF object (with
// --program NAME when it holds more than one program). The programs of an
// ELF object are verified unless --no-verify is given.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `usage:
  uebpf run [--engine E] [--mem FILE | --mem-hex HEX] [--repeat N] [--program NAME] [--no-verify] PROGRAM
  uebpf disasm PROGRAM
  uebpf conformance [--engine E] DIR
  uebpf plugin [MEMHEX] [--interpret | --engine E]
  uebpf engines
  uebpf tracepoint header --name PROVIDER:NAME --fields SPEC [-o FILE]
      (SPEC: name:type,... with u8..u64, s8..s64, f32, f64, bool, string[N])
  uebpf filter eval --fields SPEC [--engine interpreter|jit] [--] EXPR
      (JSON events on stdin, one object a line; prints 1 to keep, 0 to drop)
  uebpf filter explain --fields SPEC [--] EXPR

engines: %s
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, engineNames())
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = runCommand(args[1:], stdout)
	case "disasm":
		err = disasmCommand(args[1:], stdout)
	case "conformance":
		err = conformanceCommand(args[1:], stdout)
	case "plugin":
		err = pluginCommand(args[1:], stdin, stdout)
	case "tracepoint":
		err = tracepointCommand(args[1:], stdout)
	case "filter":
		err = filterCommand(args[1:], stdin, stdout)
	case "engines":
		fmt.Fprintln(stdout, strings.ReplaceAll(engineNames(), ", ", "\n"))
	case "help", "-h", "--help":
		fmt.Fprintf(stdout, usage, engineNames())
		return 0
	default:
		err = usageError(fmt.Sprintf("unknown command %q", args[0]))
	}
	var ue usageError
	var be badArgument
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "uebpf: %v\n", err)
		fmt.Fprintf(stderr, usage, engineNames())
		return 2
	case errors.As(err, &be):
		fmt.Fprintf(stderr, "uebpf: %v\n", err)
		return 2
	case errors.Is(err, errFailures):
		return 1 // the command already said what failed
	default:
		fmt.Fprintf(stderr, "uebpf: %v\n", err)
		return 1
	}
}

// usageError is a mistake in the command line.
type usageError string

func (e usageError) Error() string { return string(e) }

// badArgument is an argument in the right place that is wrong, such as a
// filter expression that does not compile: exit status 2 like a usage
// error, with its own message and no usage text.
type badArgument struct{ error }

// errFailures reports that a command printed failures of its own.
var errFailures = errors.New("failures")

// parseFlags parses fs from args, allowing flags after positional
// arguments, and returns the positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError(err.Error())
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
