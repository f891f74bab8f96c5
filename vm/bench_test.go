package vm_test

import (
	"testing"

	"github.com/uebpf/uebpf/internal/enginebench"
	"github.com/uebpf/uebpf/vm"
)

// BenchmarkInterpreter runs the engines' shared benchmark programs and
// reports ns per executed eBPF instruction ("ns/insn") next to ns/op.
func BenchmarkInterpreter(b *testing.B) {
	for _, bp := range enginebench.Programs {
		b.Run(bp.Name, func(b *testing.B) { enginebench.Run(b, mustLoad(b, bp.Src, nil), bp.Mem) })
	}
}

// TestBenchmarkInstructionCounts checks Env.Executed, which the benchmarks
// divide by, against counts worked out by hand from each program's
// control flow.
func TestBenchmarkInstructionCounts(t *testing.T) {
	want := map[string]uint64{
		"alu_loop":         2 + 10000*7 + 1,
		"prime":            4 + 100001*(7+3) + 1, // 100003 is prime: the loop runs to the end
		"memory_walk":      2 + 512*4 + 1,
		"two_instructions": 2,
	}
	for _, bp := range enginebench.Programs {
		env := vm.NewEnv()
		env.SetContext(make([]byte, bp.Mem))
		if _, err := mustLoad(t, bp.Src, nil).Exec(env); err != nil {
			t.Fatal(err)
		}
		if env.Executed() != want[bp.Name] {
			t.Errorf("%s: executed %d instructions, want %d", bp.Name, env.Executed(), want[bp.Name])
		}
	}
}

// BenchmarkRun measures Program.Run, which takes an Env from the program's
// pool for every run.
func BenchmarkRun(b *testing.B) {
	p := mustLoad(b, "mov %r0, 1\nexit", nil)
	mem := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Run(mem); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunFixedCost is the fixed cost of a run through Program.Run
// (issue 21: at most 25 ns), next to a Go function call that is not
// inlined, in CPU time ("cpu-ns/op"), which a shared machine distorts
// less than wall time.
func BenchmarkRunFixedCost(b *testing.B) {
	mem := make([]byte, 64)
	b.Run("interpreter", func(b *testing.B) {
		p := mustLoad(b, "mov %r0, 1\nexit", nil)
		b.ReportAllocs()
		stop := enginebench.CPU(b)
		for b.Loop() {
			if _, err := p.Run(mem); err != nil {
				b.Fatal(err)
			}
		}
		stop()
	})
	b.Run("go", func(b *testing.B) {
		stop := enginebench.CPU(b)
		for b.Loop() {
			if _, err := goRun(mem); err != nil {
				b.Fatal(err)
			}
		}
		stop()
	})
}

//go:noinline
func goRun(mem []byte) (uint64, error) { return 1, nil }

// BenchmarkRunParallel runs one program from all Ps at once.
func BenchmarkRunParallel(b *testing.B) {
	p := mustLoad(b, enginebench.Programs[0].Src, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Run(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
