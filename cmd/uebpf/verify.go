package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/verifier"
)

var verifyCmd = &command{
	name:    "verify",
	args:    "OBJECT",
	summary: "verify the programs of an ELF object without running them",
	detail: `Verify loads every userspace program of OBJECT (sections "uebpf" and
"uebpf/...") or the program --program names, of any section, as 'uebpf
run' does, with the standard helpers, runs the verifier on it and prints
its verdict: "verified" with the verifier's statistics, or "refused" with
the instruction, its C source line and the rule broken. It exits 1 if
any program is refused.

The context size is the size of the type the program's parameter points
to in BTF (0 for void *) unless --context-size sets it.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		progName := fs.String("program", "", "verify only the program of this function `name`")
		log := fs.Bool("log", false, "print the verifier's log, instruction by instruction with the register state")
		ctxSize := fs.Int("context-size", 0, "assume a context of `N` bytes instead of the size from BTF")
		loops := fs.Bool("loops-bounded-by-budget", false, "accept loops proved memory-safe but not proved to end")
		return func(pos []string, st streams) error {
			if len(pos) != 1 {
				return usageError("verify takes one ELF object")
			}
			if *ctxSize < 0 {
				return usageError(fmt.Sprintf("--context-size %d: want a size ≥ 0", *ctxSize))
			}
			path := pos[0]
			data, err := readFile(path)
			if err != nil {
				return err
			}
			if !isELF(data) {
				return badArgument{fmt.Errorf("%s: not an ELF object (bytecode and assembly are not verified: they run in checked mode)", path)}
			}
			spec, err := loadObject(path, data)
			if err != nil {
				return err
			}
			var names []string
			if *progName != "" {
				if _, err := pickProgram(path, *progName, spec.Programs); err != nil {
					return err
				}
				names = []string{*progName}
			} else {
				for name := range spec.Programs {
					names = append(names, name)
				}
				slices.Sort(names)
			}
			opts := verifier.Options{ContextSize: *ctxSize, LoopsBoundedByBudget: *loops}
			if *log {
				opts.Log = st.stdout
			}
			refused := 0
			for _, name := range names {
				if sec := spec.Programs[name].SectionName; *progName == "" && !elf.IsUserspaceSection(sec) {
					fmt.Fprintf(st.stdout, "%s (section %s): a kernel program, which the kernel verifies (name it with --program to verify it here)\n", name, sec)
					continue
				}
				if !verifyProgram(st.stdout, spec, name, opts) {
					refused++
				}
			}
			if refused > 0 {
				return errFailures
			}
			return nil
		}
	},
}

// verifyProgram loads one program of spec on its own, so that a program
// that does not load does not hide the others' verdicts, verifies it and
// prints the verdict. It reports whether the program was verified.
func verifyProgram(w io.Writer, spec *ebpf.CollectionSpec, name string, opts verifier.Options) bool {
	one := spec.Copy()
	one.Programs = map[string]*ebpf.ProgramSpec{name: one.Programs[name]}
	section := one.Programs[name].SectionName
	coll, err := elf.NewCollection(one, &elf.Options{AllPrograms: true, Helpers: helpers.Standard(nil)})
	if err != nil {
		fmt.Fprintf(w, "%s (section %s): does not load: %v\n", name, section, err)
		return false
	}
	defer coll.Close()
	ep := coll.Programs[name]
	from := "set by --context-size"
	if opts.ContextSize == 0 {
		opts.ContextSize, from = ep.ContextSize, "from BTF"
	}
	opts.LineInfo = ep.SourceLine
	if opts.Log != nil {
		fmt.Fprintf(w, "%s (section %s):\n", name, section)
	}
	res, err := verifier.Verify(ep.VM, &opts)
	if err != nil {
		fmt.Fprintf(w, "%s (section %s): refused with a %d-byte context %s: %v\n", name, section, opts.ContextSize, from, err)
		return false
	}
	fmt.Fprintf(w, "%s (section %s): verified with a %d-byte context %s: %d instructions processed, %d states stored, call depth %d",
		name, section, opts.ContextSize, from, res.InstructionsProcessed, res.StatesStored, res.MaxCallDepth)
	if res.LoopsWidened > 0 {
		fmt.Fprintf(w, ", %d loop widenings", res.LoopsWidened)
	}
	if res.LoopsUnproven > 0 {
		fmt.Fprintf(w, ", %d loops not proved to end", res.LoopsUnproven)
	}
	fmt.Fprintln(w)
	return true
}
