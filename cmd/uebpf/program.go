package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/conformance"
)

// readProgram reads raw bytecode or an assembly file.
func readProgram(path string) ([]asm.Instruction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isELF(data) {
		return nil, fmt.Errorf("%s: an ELF object: use uebpf run %s --program NAME", path, path)
	}
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

// runCommand runs a program with r1 = the memory and r2 = its length and
// prints r0; with --repeat it also prints the median time per run.
func runCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	engineName := fs.String("engine", "interpreter", "execution engine")
	memFile := fs.String("mem", "", "file whose bytes are the program's memory")
	memHex := fs.String("mem-hex", "", "the program's memory as hex bytes")
	repeat := fs.Int("repeat", 0, "run this many times and print the median ns per run")
	progName := fs.String("program", "", "the program to run, by function name, when PROGRAM is an ELF object")
	noVerify := fs.Bool("no-verify", false, "load an ELF object's programs without the verifier, in checked mode")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("run takes one program")
	}
	if *memFile != "" && *memHex != "" {
		return usageError("--mem and --mem-hex exclude each other")
	}
	p, closeProg, err := loadRunProgram(pos[0], *progName, *engineName, *noVerify)
	if err != nil {
		return err
	}
	defer closeProg()
	var mem []byte
	switch {
	case *memFile != "":
		if mem, err = os.ReadFile(*memFile); err != nil {
			return err
		}
	case *memHex != "":
		if mem, err = conformance.ParsePluginHex(spaceHex(*memHex)); err != nil {
			return err
		}
	}
	r0, err := p.Run(slices.Clone(mem))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%#x\n", r0)
	if *repeat > 0 {
		fmt.Fprintf(stdout, "median %.1f ns per run over %d runs\n", medianRunTime(p, mem, *repeat), *repeat)
	}
	return nil
}

// loadRunProgram loads what run runs: a program of an ELF object (every
// section, with the standard helpers, verified unless noVerify) or raw
// bytecode or assembly (with the conformance suite's helper, checked).
func loadRunProgram(path, progName, engineName string, noVerify bool) (conformance.Program, func(), error) {
	data, err := os.ReadFile(path)
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
		insns, err := readProgram(path)
		if err != nil {
			return nil, nil, err
		}
		p, err := engine(insns, conformance.Helpers())
		return p, func() {}, err
	}
	var engine uebpf.Engine
	switch engineName {
	case "interpreter":
		engine = uebpf.EngineInterpreter
	case "jit":
		engine = uebpf.EngineJIT
	default:
		return nil, nil, usageError(fmt.Sprintf("unknown engine %q for an ELF object (have interpreter, jit)", engineName))
	}
	coll, err := uebpf.LoadFile(path, &uebpf.Options{
		AllPrograms: true, Engine: engine, TraceOutput: os.Stderr, SkipVerification: noVerify,
	})
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for name := range coll.Programs {
		names = append(names, name)
	}
	slices.Sort(names)
	if progName == "" && len(names) == 1 {
		progName = names[0]
	}
	p := coll.Program(progName)
	if p == nil {
		coll.Close()
		if progName == "" {
			return nil, nil, usageError(fmt.Sprintf("%s has %d programs: choose one with --program (%s)", path, len(names), strings.Join(names, ", ")))
		}
		return nil, nil, fmt.Errorf("%s: no program %q (have %s)", path, progName, strings.Join(names, ", "))
	}
	return p, func() { coll.Close() }, nil
}

func isELF(data []byte) bool { return bytes.HasPrefix(data, []byte("\x7fELF")) }

// spaceHex accepts "0a0b0c" as well as "0a 0b 0c".
func spaceHex(s string) string {
	if strings.ContainsAny(s, " \t\n") || len(s)%2 != 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i += 2 {
		b.WriteString(s[i : i+2])
		b.WriteByte(' ')
	}
	return b.String()
}

// medianRunTime times n runs in up to 21 batches and returns the median of
// the batches' time per run: batching keeps the clock's own cost out of
// short runs, and the median keeps a noisy batch out of the figure.
func medianRunTime(p conformance.Program, mem []byte, n int) float64 {
	batches := min(n, 21)
	perBatch := n / batches
	times := make([]float64, batches)
	work := slices.Clone(mem)
	for b := range times {
		start := time.Now()
		for range perBatch {
			copy(work, mem)
			p.Run(work)
		}
		times[b] = float64(time.Since(start).Nanoseconds()) / float64(perBatch)
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// disasmCommand prints a program in the assembler dialect.
func disasmCommand(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return usageError("disasm takes one program")
	}
	insns, err := readProgram(args[0])
	if err != nil {
		return err
	}
	text, err := asm.Disassemble(insns)
	fmt.Fprint(stdout, text)
	return err
}
