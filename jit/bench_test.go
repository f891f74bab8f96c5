package jit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// benchPrograms are the programs of vm's BenchmarkInterpreter, so that
// figures compare directly.
var benchPrograms = []struct {
	name string
	src  string
	mem  int
}{
	{
		name: "alu_loop",
		src: `
			mov %r0, 0
			mov %r1, 10000
		loop:
			add %r0, %r1
			xor %r0, 0x5a5a
			lsh %r0, 3
			rsh %r0, 1
			mul %r0, 7
			sub %r1, 1
			jne %r1, 0, loop
			exit`,
	},
	{
		name: "prime",
		src: `
			mov %r1, 100003
			mov %r0, 0x1
			mov %r2, 0x2
			jgt %r1, 0x2, L3
			ja exit
		L2:
			add %r2, 0x1
			mov %r0, 0x1
			jge %r2, %r1, exit
		L3:
			mov %r3, %r1
			div %r3, %r2
			mul %r3, %r2
			mov %r4, %r1
			sub %r4, %r3
			mov %r0, 0x0
			jne %r4, 0x0, L2
			exit`,
	},
	{
		name: "memory_walk",
		mem:  4096,
		src: `
			mov %r0, 0
			add %r2, %r1
		loop:
			ldxdw %r3, [%r1]
			add %r0, %r3
			add %r1, 8
			jlt %r1, %r2, loop
			exit`,
	},
	{
		name: "two_instructions",
		src: `
			mov %r0, 1
			exit`,
	},
}

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

type execer interface {
	Exec(*vm.Env) (uint64, error)
}

func benchExec(b *testing.B, p execer, memSize int) {
	mem := make([]byte, memSize)
	for i := range mem {
		mem[i] = byte(i)
	}
	env := vm.NewEnv()
	env.SetContext(mem)
	if _, err := p.Exec(env); err != nil {
		b.Fatal(err)
	}
	perRun := env.Executed()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p.Exec(env)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(perRun), "ns/insn")
}

// BenchmarkEngines runs the benchmark programs on the interpreter and on
// the JIT in both safety modes.
func BenchmarkEngines(b *testing.B) {
	for _, bp := range benchPrograms {
		vp := loadVM(b, bp.src, nil)
		b.Run(bp.name+"/interpreter", func(b *testing.B) { benchExec(b, vp, bp.mem) })
		b.Run(bp.name+"/jit-checked", func(b *testing.B) { benchExec(b, compile(b, vp, jit.Options{}), bp.mem) })
		b.Run(bp.name+"/jit-unchecked", func(b *testing.B) {
			benchExec(b, compile(b, vp, jit.Options{Unchecked: true}), bp.mem)
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
	for b.Loop() {
		p.Exec(env)
	}
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
			for b.Loop() {
				p, err := jit.Compile(vp, &m.opts)
				if err != nil {
					b.Fatal(err)
				}
				p.Close()
			}
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
