package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/internal/safefs"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

var runCmd = &command{
	name:    "run",
	args:    "PROGRAM",
	summary: "run a program once and print r0",
	detail: `Run runs PROGRAM once with r1 = the address of its memory and r2 = its
length, and prints r0 in hex.

PROGRAM is raw bytecode (8-byte little-endian slots), a file in the
conformance suite's assembler dialect (see 'uebpf help asm'), or a
clang-built ELF object. An object's programs are verified first, with
the context size from BTF, and run with the standard helpers. Bytecode
and assembly have the conformance suite's helpers; on the JIT they are
verified for a context of the memory's size and run unchecked when the
verifier accepts them (as an object's programs do), checked when it does
not or with --no-verify; a line on standard error says which.

--repeat N times N more runs and prints the median time per run, wall
and CPU (the thread's): only the program is timed. The runs share the
memory the first run left (programs such as memcpy do the same work
again) unless --reset restores it before each run, outside the timing;
with --reset each run is timed alone, so its clock reads (about 0.1 µs)
count: use it for runs of microseconds.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		engine := engineFlag(fs)
		memFile := fs.String("mem", "", "read the program's memory from `file`")
		memHex := fs.String("mem-hex", "", "the program's memory as `hex` bytes: \"0a0b0c\" or \"0a 0b 0c\"")
		repeat := fs.Int("repeat", 0, "also run `N` more times and print the median time per run, wall and CPU")
		reset := fs.Bool("reset", false, "with --repeat, restore the memory before each timed run (outside the timing)")
		progName := fs.String("program", "", "the program to run, by function `name`, when PROGRAM is an ELF object\nwith more than one")
		noVerify := fs.Bool("no-verify", false, "load the program without the verifier, in checked mode")
		return func(pos []string, st streams) error {
			if len(pos) != 1 {
				return usageError("run takes one program")
			}
			if *memFile != "" && *memHex != "" {
				return usageError("--mem and --mem-hex exclude each other")
			}
			if *repeat < 0 {
				return usageError(fmt.Sprintf("--repeat %d: want a count ≥ 0", *repeat))
			}
			var mem []byte
			var err error
			switch {
			case *memFile != "":
				if mem, err = os.ReadFile(*memFile); err != nil {
					return fmt.Errorf("--mem: %w", err)
				}
			case *memHex != "":
				if mem, err = parseHex(*memHex); err != nil {
					return badArgument{fmt.Errorf("--mem-hex: %w", err)}
				}
			}
			if *reset && *repeat == 0 {
				return usageError("--reset goes with --repeat")
			}
			p, closeProg, err := loadRunProgram(pos[0], *progName, *engine, *noVerify, len(mem), st.stderr)
			if err != nil {
				return err
			}
			defer closeProg()
			work := slices.Clone(mem)
			r0, err := p.Run(work)
			if err != nil {
				return err
			}
			fmt.Fprintf(st.stdout, "%#x\n", r0)
			if *repeat > 0 {
				t := timeRuns(p, mem, work, *repeat, *reset)
				fmt.Fprintf(st.stdout, "median %s per run (CPU %s) over %d runs\n", nsText(t.wall), nsText(t.cpu), *repeat)
			}
			return nil
		}
	},
}

// parseHex reads bytes written as hex digits, in pairs, with any white
// space between pairs.
func parseHex(s string) ([]byte, error) {
	var out []byte
	for _, field := range strings.Fields(s) {
		if len(field)%2 != 0 {
			return nil, fmt.Errorf("%q: an odd number of hex digits", field)
		}
		for i := 0; i < len(field); i += 2 {
			hi, ok1 := hexDigit(field[i])
			lo, ok2 := hexDigit(field[i+1])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%q is not a hex byte", field[i:i+2])
			}
			out = append(out, hi<<4|lo)
		}
	}
	return out, nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// readFile reads a program file, refusing an empty one: it is surely not
// what the user meant, and each format would say something obscure.
func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: empty file", path)
	}
	return data, nil
}

// decodeProgram reads raw bytecode or an assembly file.
func decodeProgram(path string, data []byte) ([]asm.Instruction, error) {
	if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		insns, err := asm.Assemble(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return insns, nil
	}
	insns, err := asm.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return insns, nil
}

// loadObject parses an ELF object, saying plainly when it is truncated.
func loadObject(path string, data []byte) (*ebpf.CollectionSpec, error) {
	spec, err := elf.LoadSpecFromReader(bytes.NewReader(data))
	switch {
	case errors.Is(err, elf.ErrTruncated):
		_, detail, _ := strings.Cut(err.Error(), elf.ErrTruncated.Error()+": ")
		return nil, fmt.Errorf("%s: the ELF object is truncated (%d bytes): %s", path, len(data), detail)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case len(spec.Programs) == 0:
		return nil, fmt.Errorf("%s: no programs in this ELF object", path)
	}
	return spec, nil
}

// pickProgram returns the program called name, or the only one when name
// is "", with the names to choose from in the error otherwise.
func pickProgram[P any](path, name string, progs map[string]P) (P, error) {
	var names []string
	for n := range progs {
		names = append(names, n)
	}
	slices.Sort(names)
	if name == "" && len(names) == 1 {
		name = names[0]
	}
	p, ok := progs[name]
	switch {
	case ok:
		return p, nil
	case name == "":
		return p, usageError(fmt.Sprintf("%s has %d programs: choose one with --program (%s)", path, len(names), strings.Join(names, ", ")))
	}
	return p, badArgument{fmt.Errorf("%s: no program %q (have %s)", path, name, strings.Join(names, ", "))}
}

// loadRunProgram loads what run runs: a program of an ELF object (every
// section, with the standard helpers, verified unless noVerify) or raw
// bytecode or assembly (with the conformance suite's helper; on the JIT,
// verified for a memSize-byte context and unchecked when that passes). It
// says on log how bytecode runs.
func loadRunProgram(path, progName, engineName string, noVerify bool, memSize int, log io.Writer) (conformance.Program, func(), error) {
	data, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	if !isELF(data) {
		if progName != "" {
			return nil, nil, usageError("--program needs an ELF object")
		}
		engine, err := lookupEngine(engineName)
		if err != nil {
			return nil, nil, err
		}
		insns, err := decodeProgram(path, data)
		if err != nil {
			return nil, nil, err
		}
		if jit.Supported && (engineName == "jit" || engineName == "auto") {
			p, err := verifiedJIT(insns, noVerify, memSize, log)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", path, err)
			}
			if p != nil {
				return p, func() { p.Close() }, nil
			}
		}
		p, err := engine(insns, conformance.Helpers())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return p, func() {}, nil
	}
	engine, err := objectEngine(engineName)
	if err != nil {
		return nil, nil, err
	}
	spec, err := loadObject(path, data)
	if err != nil {
		return nil, nil, err
	}
	if _, err := pickProgram(path, progName, spec.Programs); err != nil {
		return nil, nil, err
	}
	coll, err := uebpf.NewCollection(spec, &uebpf.Options{
		AllPrograms: true, Engine: engine, TraceOutput: os.Stderr, SkipVerification: noVerify,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	p, err := pickProgram(path, progName, coll.Programs)
	if err != nil {
		coll.Close()
		return nil, nil, err
	}
	return p, func() { coll.Close() }, nil
}

// isELF reports whether data is an ELF object, or the first bytes of
// one (which loadObject then calls truncated).
func isELF(data []byte) bool {
	const magic = "\x7fELF"
	return bytes.HasPrefix(data, []byte(magic)) || len(data) > 0 && len(data) < len(magic) && strings.HasPrefix(magic, string(data))
}

// verifiedJIT compiles bytecode unchecked when the verifier proves it
// safe for a memSize-byte context, and says so on log; nil when it runs
// checked (noVerify, or the verifier refused it: log says why).
func verifiedJIT(insns []asm.Instruction, noVerify bool, memSize int, log io.Writer) (*jit.Program, error) {
	if noVerify {
		fmt.Fprintln(log, "not verified (--no-verify): running checked")
		return nil, nil
	}
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: conformance.Helpers()})
	if err != nil {
		return nil, err
	}
	proof, err := verifier.Verify(vp, &verifier.Options{ContextSize: memSize, ContextLengthInR2: true, AllowPointerLeaks: true, LoopsBoundedByBudget: true})
	if err != nil {
		fmt.Fprintf(log, "not verified for a %d-byte memory, running checked: %v\n", memSize, err)
		return nil, nil
	}
	p, err := jit.Compile(vp, &jit.Options{Unchecked: true, Verified: proof})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "verified for a %d-byte memory: running unchecked\n", memSize)
	return p, nil
}

// runTimes are the median times of one run, in ns.
type runTimes struct{ wall, cpu float64 }

// timeRuns times n runs of p on work and returns the medians per run.
// Without reset, the runs go in up to 21 batches on the memory as the
// runs leave it, and a batch's time per run is what is compared:
// batching keeps the clocks' own cost out of short runs, the median keeps
// a noisy batch out of the figure. With reset, mem is copied into work
// before each run, untimed, and each run is timed alone.
func timeRuns(p conformance.Program, mem, work []byte, n int, reset bool) runTimes {
	runtime.LockOSThread() // the CPU clock is the thread's
	defer runtime.UnlockOSThread()
	batches, perBatch := min(n, 21), n/min(n, 21)
	if reset {
		batches, perBatch = n, 1
	}
	wall := make([]float64, batches)
	cpu := make([]float64, batches)
	for b := range batches {
		if reset {
			copy(work, mem)
		}
		c0, w0 := threadCPU(), time.Now()
		for range perBatch {
			p.Run(work)
		}
		w1, c1 := time.Now(), threadCPU()
		wall[b] = float64(w1.Sub(w0).Nanoseconds()) / float64(perBatch)
		cpu[b] = float64(c1-c0) / float64(perBatch)
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	return runTimes{wall[len(wall)/2], cpu[len(cpu)/2]}
}

// threadCPU is the calling thread's CPU time in ns.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// nsText writes a time in ns with a unit that keeps it short.
func nsText(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.3f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}

var disasmCmd = &command{
	name:    "disasm",
	args:    "PROGRAM",
	summary: "disassemble bytecode or an ELF object, with C source lines",
	detail: `Disasm prints PROGRAM in the assembler dialect of 'uebpf asm'.

For an ELF object it prints every program (or the one --program names),
with the C source lines from the object's BTF line info above the
instructions they compiled to, as llvm-objdump -S does, and the maps and
global data that lddw instructions refer to. Slots are numbered; jumps
show their target slot.`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		progName := fs.String("program", "", "disassemble only the program of this function `name` (ELF objects)")
		return func(pos []string, st streams) error {
			if len(pos) != 1 {
				return usageError("disasm takes one program")
			}
			path := pos[0]
			data, err := readFile(path)
			if err != nil {
				return err
			}
			if isELF(data) {
				return disasmObject(path, data, *progName, st.stdout)
			}
			if *progName != "" {
				return usageError("--program needs an ELF object")
			}
			insns, err := decodeProgram(path, data)
			if err != nil {
				return err
			}
			text, err := asm.Disassemble(insns)
			fmt.Fprint(st.stdout, text)
			return err
		}
	},
}

// disasmObject prints the programs of an ELF object with their source.
func disasmObject(path string, data []byte, progName string, w io.Writer) error {
	spec, err := loadObject(path, data)
	if err != nil {
		return err
	}
	names := []string{progName}
	if progName == "" {
		names = names[:0]
		for name := range spec.Programs {
			names = append(names, name)
		}
		slices.Sort(names)
	} else if _, err := pickProgram(path, progName, spec.Programs); err != nil {
		return err
	}
	for i, name := range names {
		l, err := elf.NewListing(spec.Programs[name])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeListing(w, l)
	}
	return nil
}

// writeListing prints one program: a header per function, each source
// line where it changes, then the slots.
func writeListing(w io.Writer, l *elf.Listing) {
	fmt.Fprintf(w, "%s (section %s):\n", l.Name, l.Section)
	var last string
	for pc := range l.Instructions {
		if sym := l.Symbols[pc]; sym != "" && pc > 0 {
			fmt.Fprintf(w, "\n%s:\n", sym)
		}
		if src := l.SourceLine(pc); src != last && src != "" {
			fmt.Fprintf(w, "; %s\n", src)
			last = src
		}
		if pc > 0 && l.Instructions[pc-1].IsLDDW() {
			continue // the lddw's second slot
		}
		text := asm.Format(l.Instructions, pc)
		var notes []string
		if ref := l.References[pc]; ref != "" {
			notes = append(notes, ref)
		}
		if ins := l.Instructions[pc]; ins.Opcode == asm.ClassJMP|asm.JmpCALL && ins.Src == 0 {
			if h, ok := standardHelpers[ins.Imm]; ok {
				notes = append(notes, h.Name)
			}
		}
		if t, ok := jumpTarget(l.Instructions[pc], pc); ok {
			notes = append(notes, fmt.Sprintf("-> %d", t))
		}
		if len(notes) > 0 && !strings.Contains(text, "#") {
			text += "  # " + strings.Join(notes, ", ")
		}
		fmt.Fprintf(w, "%5d: %s\n", pc, text)
	}
}

// standardHelpers name the helper calls of listings.
var standardHelpers = helpers.Standard(nil)

// jumpTarget returns the slot a jump or local call goes to.
func jumpTarget(ins asm.Instruction, pc int) (int, bool) {
	class := ins.Class()
	if class != asm.ClassJMP && class != asm.ClassJMP32 {
		return 0, false
	}
	switch op := ins.Opcode & 0xf0; {
	case op == asm.JmpEXIT:
		return 0, false
	case op == asm.JmpCALL: // only local calls (src 1) have a target
		if ins.Src != 1 {
			return 0, false
		}
		return pc + 1 + int(ins.Imm), true
	case class == asm.ClassJMP32 && op == asm.JmpJA: // gotol: the offset is in imm
		return pc + 1 + int(ins.Imm), true
	}
	return pc + 1 + int(ins.Offset), true
}

var asmCmd = &command{
	name:    "asm",
	args:    "SOURCE",
	summary: "assemble a program into raw bytecode",
	detail: `Asm assembles SOURCE, a program in the conformance suite's assembler
dialect (uBPF's; 'go doc github.com/uebpf/uebpf/asm' describes it), into
raw bytecode: 8-byte little-endian instruction slots, the format 'uebpf
run' and the kernel take. The output goes to SOURCE with its extension
replaced by .bin unless -o names another file ("-" for standard output).`,
	setup: func(fs *flag.FlagSet) func([]string, streams) error {
		out := fs.String("o", "", "write the bytecode to `file` (default: SOURCE with the extension .bin)")
		return func(pos []string, st streams) error {
			if len(pos) != 1 {
				return usageError("asm takes one source file")
			}
			src := pos[0]
			data, err := readFile(src)
			if err != nil {
				return err
			}
			if isELF(data) || !utf8.Valid(data) || bytes.ContainsRune(data, 0) {
				return badArgument{fmt.Errorf("%s: not assembler text (disassemble bytecode and objects with uebpf disasm)", src)}
			}
			insns, err := asm.Assemble(string(data))
			if err != nil {
				return badArgument{fmt.Errorf("%s: %w", src, err)}
			}
			code := asm.Encode(nil, insns)
			dst := *out
			if dst == "" {
				dst = strings.TrimSuffix(src, pathExt(src)) + ".bin"
			}
			if dst == src {
				return usageError(fmt.Sprintf("the output %s would overwrite the source: name another with -o", dst))
			}
			if dst == "-" {
				_, err := st.stdout.Write(code)
				return err
			}
			if err := safefs.WriteFile(dst, code, 0o644); err != nil {
				return fmt.Errorf("asm: %w", err)
			}
			return nil
		}
	},
}

// pathExt is filepath.Ext of the file name only (not of a folder).
func pathExt(path string) string {
	for i := len(path) - 1; i >= 0 && path[i] != '/'; i-- {
		if path[i] == '.' {
			return path[i:]
		}
	}
	return ""
}
