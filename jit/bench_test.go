package jit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/enginebench"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

func loadVM(tb testing.TB, src string, helpers vm.Helpers) *vm.Program {
	tb.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func compile(tb testing.TB, vp *vm.Program, opts jit.Options) *jit.Program {
	tb.Helper()
	if !jit.Supported {
		tb.Skip(jit.ErrUnsupportedArch)
	}
	p, err := jit.Compile(vp, &opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// BenchmarkEngines runs the benchmark programs on the interpreter and on
// the JIT in both safety modes.
func BenchmarkEngines(b *testing.B) {
	for _, bp := range enginebench.Programs {
		vp := loadVM(b, bp.Src, nil)
		b.Run(bp.Name+"/interpreter", func(b *testing.B) { enginebench.Run(b, vp, bp.Mem) })
		b.Run(bp.Name+"/jit-checked", func(b *testing.B) { enginebench.Run(b, compile(b, vp, jit.Options{}), bp.Mem) })
		b.Run(bp.Name+"/jit-unchecked", func(b *testing.B) {
			enginebench.Run(b, compile(b, vp, jit.Options{Unchecked: true}), bp.Mem)
		})
	}
}

// BenchmarkHelperRoundTrip measures one helper call through the general
// path (out to Go and back in): a loop of 100 calls, reported per call.
func BenchmarkHelperRoundTrip(b *testing.B) {
	helpers := vm.Helpers{1: {Name: "inc", Func: func(_ *vm.Env, r1, _, _, _, _ uint64) uint64 { return r1 + 1 }}}
	vp := loadVM(b, `
		mov %r6, 100
		mov %r1, 0
	loop:
		call 1
		mov %r1, %r0
		sub %r6, 1
		jne %r6, 0, loop
		exit`, helpers)
	p := compile(b, vp, jit.Options{})
	env := vm.NewEnv()
	if r0, err := p.Exec(env); err != nil || r0 != 100 {
		b.Fatal(r0, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	stop := enginebench.CPU(b)
	for b.Loop() {
		p.Exec(env)
	}
	stop()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/call")
}

// BenchmarkCompile measures compile time of a 1,000-instruction program
// mixing ALU, memory, jumps and calls.
func BenchmarkCompile(b *testing.B) {
	vp := loadVM(b, mixedProgram(1000), vm.Helpers{1: {Name: "nop", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }}})
	if n := len(vp.Instructions()); n != 1000 {
		b.Fatalf("%d instructions", n)
	}
	for _, m := range []struct {
		name string
		opts jit.Options
	}{{"checked", jit.Options{}}, {"unchecked", jit.Options{Unchecked: true}}} {
		b.Run(m.name, func(b *testing.B) {
			if !jit.Supported {
				b.Skip(jit.ErrUnsupportedArch)
			}
			b.ReportAllocs()
			stop := enginebench.CPU(b)
			for b.Loop() {
				p, err := jit.Compile(vp, &m.opts)
				if err != nil {
					b.Fatal(err)
				}
				p.Close()
			}
			stop()
		})
	}
}

// mixedProgram returns an n-slot program of typical instructions.
func mixedProgram(n int) string {
	var s strings.Builder
	s.WriteString("mov %r0, 0\nmov %r6, %r1\n")
	body := []string{
		"add %r0, 7", "ldxdw %r2, [%r10-8]", "stxdw [%r10-16], %r0", "mul %r2, %r0",
		"jgt %r2, 100, +1", "xor %r0, %r2", "ldxw %r3, [%r6+4]", "lsh %r3, 2",
		"div %r0, 3", "stw [%r10-4], 1",
	}
	for i := 2; i < n-3; i++ {
		s.WriteString(body[i%len(body)] + "\n")
	}
	s.WriteString("call 1\n")
	fmt.Fprintf(&s, "mov %%r0, 0\nexit\n")
	return s.String()
}

// goCall is a Go function with the signature of Exec that returns at once:
// the floor under the fixed cost of two_instructions, measured in the same
// run (the loop and an interface call).
type goCall struct{}

//go:noinline
func (goCall) Exec(*vm.Env) (uint64, error) { return 1, nil }

// BenchmarkGoCall measures a call of goCall.Exec through enginebench.Run.
func BenchmarkGoCall(b *testing.B) { enginebench.Run(b, goCall{}, 0) }

// BenchmarkRun measures Program.Run of the 2-instruction program with an
// 8-byte context: the fixed cost with an Env from the program's pool.
func BenchmarkRun(b *testing.B) {
	vp := loadVM(b, "mov %r0, 1\nexit", nil)
	ctx := make([]byte, 8)
	b.Run("interpreter", func(b *testing.B) {
		b.ReportAllocs()
		stop := enginebench.CPU(b)
		for b.Loop() {
			vp.Run(ctx)
		}
		stop()
	})
	b.Run("jit", func(b *testing.B) {
		p := compile(b, vp, jit.Options{})
		b.ReportAllocs()
		stop := enginebench.CPU(b)
		for b.Loop() {
			p.Run(ctx)
		}
		stop()
	})
	// The same program through its func value (Program.Direct), against
	// a Go function of the same signature that is not inlined: the floor.
	b.Run("jit-direct", func(b *testing.B) {
		run := compile(b, vp, jit.Options{}).Direct()
		if run == nil {
			b.Skip("no direct entry on this architecture")
		}
		stop := enginebench.CPU(b)
		for b.Loop() {
			run(ctx)
		}
		stop()
	})
	b.Run("go", func(b *testing.B) {
		stop := enginebench.CPU(b)
		for b.Loop() {
			goRun(ctx)
		}
		stop()
	})
	b.Run("go-func-value", func(b *testing.B) {
		run := goRunValue
		stop := enginebench.CPU(b)
		for b.Loop() {
			run(ctx)
		}
		stop()
	})
}

//go:noinline
func goRun(ctx []byte) (uint64, error) { return 1, nil }

var goRunValue = goRun
