// Command uebpf runs, verifies, assembles and disassembles eBPF programs
// with the uebpf runtime.
//
//	uebpf run [--engine E] [--mem FILE | --mem-hex HEX] [--repeat N] [--program NAME] [--no-verify] PROGRAM
//	uebpf verify [--program NAME] [--log] [--context-size N] OBJECT
//	uebpf disasm [--program NAME] PROGRAM
//	uebpf asm [-o OUT] SOURCE
//	uebpf conformance [--engine E] DIR
//	uebpf plugin [MEMHEX] [--interpret | --jit | --engine E]
//	uebpf engines
//	uebpf filter eval --fields SPEC [--engine E] [--] EXPR
//	uebpf filter explain --fields SPEC [--] EXPR
//	uebpf tracepoint header --name PROVIDER:NAME --fields SPEC [-o FILE]
//	uebpf trace list|enable|disable|stream|stats|record|snapshot|map (--pid PID | --socket PATH) [--ssh HOST] ...
//	uebpf trace recover FILE --output DIR
//	uebpf trace ps [--ssh HOST | --remote CMD]
//	uebpf trace --stdio (--pid PID | --socket PATH)
//	uebpf help [COMMAND]
//	uebpf --version
//
// PROGRAM is raw bytecode (8-byte little-endian slots), a file in the
// conformance suite's assembler dialect, or a clang-built ELF object (with
// --program NAME when it holds more than one program). The programs of an
// ELF object are verified unless --no-verify is given. "uebpf help
// COMMAND" lists a command's flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// streams are a command's standard files.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// A command is one entry of the command table: what the help says about
// it, and its flags and body.
type command struct {
	name    string // "run", or "filter eval" for a subcommand
	args    string // the synopsis after the flags: "PROGRAM"
	summary string // one line for the command list
	detail  string // paragraphs for "uebpf help NAME"
	// setup declares the command's flags on fs and returns its body,
	// which receives the positional arguments.
	setup func(fs *flag.FlagSet) func(pos []string, st streams) error
}

// commands is filled by init: their bodies refer to the table for help.
var commands []*command

func init() {
	commands = []*command{
		runCmd, verifyCmd, disasmCmd, asmCmd, conformanceCmd, pluginCmd, enginesCmd,
		filterEvalCmd, filterExplainCmd, tracepointHeaderCmd,
		traceListCmd, traceEnableCmd, traceDisableCmd, traceStreamCmd, traceStatsCmd,
		traceRecordCmd, traceSnapshotCmd, traceRecoverCmd, traceMapCmd, tracePsCmd, traceStdioCmd,
	}
}

// lookup finds the command args start with: a two-word subcommand
// ("filter eval") or a command. It returns how many words it used, or
// a nil command and the group name when args name a group ("filter")
// without one of its subcommands.
func lookup(args []string) (*command, int, string) {
	for _, c := range commands {
		group, sub, ok := strings.Cut(c.name, " ")
		if ok && args[0] == group {
			if len(args) > 1 && args[1] == sub {
				return c, 2, ""
			}
			continue
		}
		if c.name == args[0] {
			return c, 1, ""
		}
	}
	for _, c := range commands {
		if group, _, ok := strings.Cut(c.name, " "); ok && group == args[0] {
			return nil, 0, group
		}
	}
	return nil, 0, ""
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	st := streams{stdin, stdout, stderr}
	if len(args) == 0 {
		topUsage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return helpCommand(args[1:], st)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, version())
		return 0
	}
	if len(args) > 1 && args[0] == "trace" && args[1] == "--stdio" {
		args = append([]string{"trace", "stdio"}, args[2:]...) // as ssh runs it
	}
	c, n, group := lookup(args)
	if c == nil {
		if group != "" {
			fmt.Fprintf(stderr, "uebpf %s: want one of: %s\nRun 'uebpf help %s' for usage.\n", group, strings.Join(subcommands(group), ", "), group)
		} else {
			fmt.Fprintf(stderr, "uebpf: unknown command %q\nRun 'uebpf help' for usage.\n", args[0])
		}
		return 2
	}
	err := c.execute(args[n:], st)
	var ue usageError
	var be badArgument
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		c.help(stdout)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "uebpf %s: %v\nRun 'uebpf help %s' for usage.\n", c.name, err, c.name)
		return 2
	case errors.As(err, &be):
		fmt.Fprintf(stderr, "uebpf %s: %v\n", c.name, err)
		return 2
	case errors.Is(err, errFailures):
		return 1 // the command already said what failed
	default:
		// Library errors may carry the root package's own prefix.
		fmt.Fprintf(stderr, "uebpf: %s\n", strings.TrimPrefix(err.Error(), "uebpf: "))
		return 1
	}
}

// execute parses args for c and runs it. Flags may follow positional
// arguments; everything after "--" is positional.
func (c *command) execute(args []string, st streams) error {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	body := c.setup(fs)
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	return body(append(pos, rest...), st)
}

// parseFlags parses fs from args, allowing flags after positional
// arguments, and returns the positional ones. -h and --help return
// flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, err
		} else if err != nil {
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

// usageError is a mistake in the command line: exit status 2, with a
// pointer to the command's help.
type usageError string

func (e usageError) Error() string { return string(e) }

// badArgument is an argument in the right place that is wrong, such as a
// filter expression that does not compile: exit status 2 like a usage
// error, with its own message and no pointer to the help.
type badArgument struct{ error }

func (e badArgument) Unwrap() error { return e.error }

// errFailures reports that a command printed failures of its own.
var errFailures = errors.New("failures")

// topUsage prints the command list.
func topUsage(w io.Writer) {
	fmt.Fprint(w, "uebpf runs, verifies, assembles and disassembles eBPF programs in userspace.\n\nUsage:\n\n\tuebpf <command> [flags] [arguments]\n\nCommands:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-19s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\t%-19s %s\n", "help", "describe a command and its flags")
	fmt.Fprint(w, "\nRun 'uebpf help <command>' for a command's flags; 'uebpf --version' for the version.\n")
}

// helpCommand is "uebpf help [COMMAND]": the command list, or the help of
// a command (of each subcommand of a group).
func helpCommand(args []string, st streams) int {
	if len(args) == 0 {
		topUsage(st.stdout)
		return 0
	}
	c, n, group := lookup(args)
	switch {
	case c != nil && n == len(args):
		c.help(st.stdout)
		return 0
	case c == nil && group != "" && len(args) == 1:
		if d := groupHelp[group]; d != "" {
			fmt.Fprintf(st.stdout, "%s\n\n", d)
		}
		for i, c := range commands {
			if strings.HasPrefix(c.name, group+" ") {
				if i > 0 {
					fmt.Fprintln(st.stdout)
				}
				c.help(st.stdout)
			}
		}
		return 0
	}
	fmt.Fprintf(st.stderr, "uebpf help %s: unknown command\nRun 'uebpf help' for the list.\n", strings.Join(args, " "))
	return 2
}

// groupHelp is what "uebpf help GROUP" says before its subcommands.
var groupHelp = map[string]string{"trace": traceHelp}

// subcommands lists the subcommands of group.
func subcommands(group string) []string {
	var subs []string
	for _, c := range commands {
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == group {
			subs = append(subs, sub)
		}
	}
	return subs
}

// help prints c's synopsis, description and flags, as "go help" does.
func (c *command) help(w io.Writer) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.setup(fs)
	synopsis := "uebpf " + c.name
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		synopsis += " [flags]"
	}
	if c.args != "" {
		synopsis += " " + c.args
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", synopsis, strings.TrimSpace(c.detail))
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		fmt.Fprintf(w, "  %s%s", dash, f.Name)
		if name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// version describes the build from the binary's build information: the
// module version (a tag, or "(devel)" for a build in a checkout) and the
// VCS revision the go command recorded.
func version() string {
	v := "uebpf"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			v += " " + info.Main.Version
		}
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+modified"
				}
			}
		}
		if rev != "" {
			v += " " + rev[:min(len(rev), 12)] + modified
		}
	}
	return fmt.Sprintf("%s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
