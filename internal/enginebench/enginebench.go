// Package enginebench holds the programs that the engines' benchmarks
// share (vm's BenchmarkInterpreter, jit's BenchmarkEngines), so that their
// figures compare directly, and the loop that measures them.
package enginebench

import (
	"syscall"
	"testing"
	"time"

	"github.com/uebpf/uebpf/vm"
)

// Program is a benchmark program in the assembler dialect.
type Program struct {
	Name string
	Src  string
	Mem  int // bytes of context memory, filled with 0, 1, 2, ...
}

// Programs are the benchmark programs.
var Programs = []Program{
	{
		// Dependent ALU operations in a counted loop.
		Name: "alu_loop",
		Src: `
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
		Name: "prime",
		Src: `
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
		Name: "memory_walk",
		Mem:  4096,
		Src: `
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
		Name: "two_instructions",
		Src: `
			mov %r0, 1
			exit`,
	},
}

// Execer is an engine's loaded program.
type Execer interface {
	Exec(*vm.Env) (uint64, error)
}

// Run benchmarks p on a reused Env with memSize bytes of context and
// reports ns per executed eBPF instruction ("ns/insn") besides ns/op.
func Run(b *testing.B, p Execer, memSize int) {
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
	stop := CPU(b)
	for b.Loop() {
		p.Exec(env)
	}
	stop()
	if perRun != 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(perRun), "ns/insn")
	}
}

// CPU starts measuring the process's CPU time; the function it returns
// reports it per iteration as "cpu-ns/op". On a shared machine wall time
// also counts the time the benchmark spent waiting for a CPU; CPU time
// does not. Call it right before the loop and the function right after.
func CPU(b *testing.B) (stop func()) {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
