package redteam

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/vm"
)

// fuzzHelper is a standard helper the fuzzer calls, and whether its result
// is the same on both engines for the same arguments and maps.
type fuzzHelper struct {
	num int
	// deterministic: no time, randomness, pids or CPU slots, and no result
	// that depends on addresses or on host memory around them (the printf
	// family prints and follows pointers, the probe_read family reads any
	// address, and each engine's run has a context and maps of its own)
	deterministic bool
	pointer       bool // returns a pointer (compare only whether it is 0)
}

var fuzzHelpers = []fuzzHelper{
	{1, true, true}, {2, true, false}, {3, true, false}, {4, false, false},
	{5, false, false}, {6, false, false}, {7, false, false}, {8, false, false},
	{12, true, false}, {14, false, false}, {15, false, false}, {16, true, false},
	{42, true, false}, {45, false, false}, {87, true, false}, {88, true, false},
	{89, true, false}, {112, false, false}, {114, false, false}, {125, false, false},
	{130, true, false}, {131, true, true}, {132, true, false}, {133, true, false},
	{134, true, false}, {160, false, false}, {165, false, false}, {177, false, false},
	{181, true, false}, {182, true, false}, {195, true, true}, {208, false, false},
}

// fuzzOperand decodes an operand from two bytes (see operand for the
// notation; "r6" is the result of the previous call, "r0" that call's r0).
func fuzzOperand(kind, v byte) string {
	switch kind % 12 {
	case 0:
		return fmt.Sprintf("r10-%d", 1+int(v)*2)
	case 1:
		return fmt.Sprintf("ctx+%d", int(v)+int(v)/4)
	case 2:
		return fmt.Sprintf("val+%d", v%80)
	case 3:
		return fmt.Sprintf("rec+%d", v%80)
	case 4:
		return fmt.Sprintf("map%d", v%7)
	case 5:
		return "fn"
	case 6:
		return fmt.Sprint(v)
	case 7:
		return fmt.Sprint(uint64(1) << (v % 64))
	case 8:
		return wildPointers[int(v)%len(wildPointers)]
	case 9:
		return "r6"
	case 10:
		return fmt.Sprint(int(v) * 8)
	default:
		return fmt.Sprintf("0x%x", uint64(v)*0x0101010101010101)
	}
}

// fuzzProgram decodes data: 0xff then raw bytecode, or 12-byte chunks of
// (helper, 5 × (kind, value), spare). It reports whether the program's
// results may be compared across engines.
func fuzzProgram(data []byte) (insns []asm.Instruction, comparable bool, err error) {
	if len(data) > 0 && data[0] == 0xff {
		insns, err := asm.Decode(data[1 : 1+(len(data)-1)/8*8])
		return insns, false, err
	}
	var b strings.Builder
	b.WriteString(prologue)
	comparable = true
	lastPointer := false
	for n := 0; len(data) >= 12 && n < 32; n++ {
		c := data[:12]
		data = data[12:]
		h := fuzzHelpers[int(c[0])%len(fuzzHelpers)]
		for i := range 5 {
			a := fuzzOperand(c[1+2*i], c[2+2*i])
			if a == "r6" {
				fmt.Fprintf(&b, "mov %%r%d, %%r6\n", i+1)
			} else {
				b.WriteString(operand(i+1, a))
			}
			if a == "r6" && lastPointer {
				comparable = false
			}
		}
		fmt.Fprintf(&b, "call %d\nmov %%r6, %%r0\n", h.num)
		if !h.deterministic {
			comparable = false
		}
		lastPointer = h.pointer
		if h.pointer {
			b.WriteString("jeq %r6, 0, +1\nmov %r6, 1\n")
		}
	}
	b.WriteString(`
	jeq %r7, 0, +3
	mov %r1, %r7
	mov %r2, 0
	call 133
	mov %r0, %r6
	exit
cb:	mov %r0, 0
	jlt %r1, 3, +1
	mov %r0, 1
	exit
`)
	insns, err = assemble(b.String())
	return insns, comparable, err
}

// fuzzBudget and fuzzLimit bound a fuzz run: a run over 4 × fuzzLimit fails.
const (
	fuzzBudget = 1 << 16
	fuzzLimit  = 250 * time.Millisecond
)

type fuzzResult struct {
	r0  uint64
	err error
	dur time.Duration
}

func fuzzRun(insns []asm.Instruction, engine string) (fuzzResult, bool, error) {
	w, err := newWorld()
	if err != nil {
		return fuzzResult{}, false, err
	}
	defer w.close()
	p, err := vm.Load(&vm.ProgramSpec{Name: "fuzz", Instructions: insns, Maps: w.ms},
		&vm.Options{Helpers: helpers.Standard(nil), Budget: fuzzBudget})
	if err != nil {
		return fuzzResult{}, false, nil
	}
	if err := w.progs.SetProgram(0, p); err != nil {
		return fuzzResult{}, false, err
	}
	r, err := newRunner(p, engine)
	if err != nil {
		return fuzzResult{}, false, nil // the JIT refuses it (callbacks)
	}
	defer r.close()
	ctx := hostileCtx()
	// A run that never returns would hang the fuzzing worker silently:
	// crash it instead, with every goroutine's stack, so that the input
	// is saved as a failure.
	watchdog := time.AfterFunc(20*fuzzLimit, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("%s: run still going after %v", engine, 20*fuzzLimit))
	})
	defer watchdog.Stop()
	start := time.Now()
	r0, err := r.run(ctx)
	res := fuzzResult{r0, err, time.Since(start)}
	if err != nil {
		var re *vm.RunError
		if !errors.As(err, &re) {
			return res, true, fmt.Errorf("%s: run error %v (%T) is not a *vm.RunError", engine, err, err)
		}
	}
	if res.dur > 4*fuzzLimit {
		return res, true, fmt.Errorf("%s: run took %v, limit %v", engine, res.dur, fuzzLimit)
	}
	if _, err := w.drain(); err != nil {
		return res, true, fmt.Errorf("%s: %w", engine, err)
	}
	return res, true, nil
}

func runErrKey(err error) string {
	var re *vm.RunError
	if !errors.As(err, &re) {
		return fmt.Sprint(err)
	}
	return fmt.Sprintf("pc %d: %v", re.PC, re.Err)
}

// fuzzSeeds are the reproducers and a few helper mixes.
func fuzzSeeds() [][]byte {
	raw := func(src string) []byte {
		insns, err := assemble(src)
		if err != nil {
			panic(err)
		}
		return append([]byte{0xff}, asm.Encode(nil, insns)...)
	}
	// The ring buffer reproducers of issue 16, which crashed the process.
	seeds := [][]byte{
		raw(`
			lddw %r1, map_by_fd(0)
			mov %r2, 256
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			stw [%r7+16], 0xbffffff0
			mov %r1, %r7
			add %r1, 24
			mov %r2, 0
			call 132
			exit`),
		raw(`
			lddw %r1, map_by_fd(0)
			mov %r2, 256
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			mov %r1, %r7
			mov %r2, 0
			call 132
			stw [%r7], 0x40000000
			exit`),
	}
	seeds = append(seeds, raw("ja -1\nexit"))
	// ringbuf reserve, then submit of the record + 24; snprintf from the
	// context; probe_read of a wild pointer; lookup then update with r6.
	seeds = append(seeds,
		[]byte{21, 4, 0, 6, 64, 6, 0, 6, 0, 6, 0, 0, 22, 3, 24, 6, 0, 6, 0, 6, 0, 6, 0, 0},
		[]byte{26, 0, 60, 6, 120, 1, 0, 1, 128, 6, 32, 0},
		[]byte{17, 0, 32, 6, 64, 8, 3, 6, 0, 6, 0, 0},
		[]byte{0, 4, 1, 0, 3, 6, 0, 6, 0, 6, 0, 0, 1, 9, 0, 0, 3, 0, 20, 6, 0, 6, 0, 0},
		[]byte{28, 7, 40, 5, 0, 6, 0, 6, 0, 6, 0, 0},
	)
	return seeds
}

// fuzzing reports whether this process runs the fuzzing engine (or is one
// of its workers), rather than the seed corpus under plain go test.
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if fl := flag.Lookup(name); fl != nil && fl.Value.String() != "" && fl.Value.String() != "false" {
			return true
		}
	}
	return false
}

func FuzzHostileHelpers(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	if !fuzzing() && !inChild() {
		// The seed corpus runs in a child process, so that a crash fails
		// this test instead of killing the run.
		out, err := runChild(nil, f.Name())
		if err != nil || !strings.Contains(out, "PASS") {
			f.Fatalf("seed corpus in a child process failed (%v)\n%s", err, summary(out))
		}
		f.Fuzz(func(*testing.T, []byte) {}) // the child ran them
		return
	}
	if inChild() && os.Getenv(caseEnv) != f.Name() {
		f.Skip()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		insns, comparable, err := fuzzProgram(data)
		if err != nil {
			return
		}
		ri, okI, err := fuzzRun(insns, "interp")
		if err != nil {
			t.Fatal(err)
		}
		rj, okJ, err := fuzzRun(insns, "jit")
		if err != nil {
			t.Fatal(err)
		}
		if !comparable || !okI || !okJ {
			return
		}
		if ki, kj := runErrKey(ri.err), runErrKey(rj.err); ki != kj {
			t.Fatalf("interp error %q, jit error %q", ki, kj)
		}
		if ri.err == nil && ri.r0 != rj.r0 {
			t.Fatalf("interp r0 %#x, jit r0 %#x", ri.r0, rj.r0)
		}
	})
}
