package vm_test

import (
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// Benchmark programs. Each reports ns per executed eBPF instruction
// ("ns/insn") next to the usual ns/op, so engines and machines compare on a
// per-instruction basis.
var benchPrograms = []struct {
	name string
	src  string
	mem  int // bytes of context memory
	// insns is the number of instructions one run executes, counted by
	// hand from the program's control flow.
	insns float64
}{
	{
		// Dependent ALU operations in a counted loop.
		name:  "alu_loop",
		insns: 2 + 10000*7 + 1,
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
		// prime from the conformance suite, on a larger prime.
		name:  "prime",
		insns: 4 + 100001*(7+3) + 1, // 100003 is prime: the loop runs to the end
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
		// Sum of the 64-bit words of a 4 KiB context, with bounds known
		// from r2 as a C loop over (data, len) would do it.
		name:  "memory_walk",
		insns: 2 + 512*4 + 1,
		mem:   4096,
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
		// The fixed cost of a run.
		name:  "two_instructions",
		insns: 2,
		src: `
			mov %r0, 1
			exit`,
	},
}

func loadBench(b *testing.B, src string) *vm.Program {
	b.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		b.Fatal(err)
	}
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkInterpreter(b *testing.B) {
	for _, bp := range benchPrograms {
		b.Run(bp.name, func(b *testing.B) {
			p := loadBench(b, bp.src)
			mem := make([]byte, bp.mem)
			for i := range mem {
				mem[i] = byte(i)
			}
			env := vm.NewEnv()
			env.SetContext(mem)
			if _, err := p.Exec(env); err != nil {
				b.Fatal(err)
			}
			if env.Executed() != uint64(bp.insns) {
				b.Fatalf("executed %d instructions, the table says %v", env.Executed(), bp.insns)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p.Exec(env)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/bp.insns, "ns/insn")
		})
	}
}

// BenchmarkRun measures Program.Run, which takes an Env from the program's
// pool for every run.
func BenchmarkRun(b *testing.B) {
	p := loadBench(b, "mov %r0, 1\nexit")
	mem := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Run(mem); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunParallel runs one program from all Ps at once.
func BenchmarkRunParallel(b *testing.B) {
	p := loadBench(b, benchPrograms[0].src)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Run(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
