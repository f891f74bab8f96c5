package enginebench_test

import (
	"bytes"
	"testing"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/benchset"
	"github.com/uebpf/uebpf/internal/enginebench"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// BenchmarkSetEngines is internal/benchset's BenchmarkSet with CPU time:
// every program of the standard set through uebpf.Program.Run on the
// interpreter and the JIT (verified at load, so the JIT runs unchecked),
// next to its native Go equivalent, all with cpu-ns/op, which descheduling
// on a shared machine does not inflate. The programs without maps also run
// through Exec with a reused Env on the JIT in both safety modes
// (exec-checked, exec-unchecked): the checked-mode cost.
func BenchmarkSetEngines(b *testing.B) {
	for _, bm := range benchset.Set {
		for _, engine := range []uebpf.Engine{uebpf.EngineInterpreter, uebpf.EngineJIT} {
			b.Run(bm.Name+"/"+engine.String(), func(b *testing.B) {
				coll, p, err := bm.Load(engine)
				if err != nil {
					b.Fatal(err)
				}
				defer coll.Close()
				ctx := bm.Input()
				if r0, err := p.Run(ctx); err != nil || r0 != bm.Want {
					b.Fatalf("%d, %v; want %d", r0, err, bm.Want)
				}
				b.ResetTimer()
				stop := enginebench.CPU(b)
				for b.Loop() {
					p.Run(ctx)
				}
				stop()
			})
		}
		b.Run(bm.Name+"/native", func(b *testing.B) {
			ctx := bm.Input()
			stop := enginebench.CPU(b)
			for b.Loop() {
				bm.Native(ctx)
			}
			stop()
		})
		if bm.Setup != nil {
			continue
		}
		obj, err := benchset.Object(bm.Object)
		if err != nil {
			b.Fatal(err)
		}
		coll, err := elf.LoadReader(bytes.NewReader(obj), &elf.Options{Helpers: helpers.Standard(nil)})
		if err != nil {
			b.Fatal(err)
		}
		vp := coll.Program(bm.Program).VM
		for _, m := range []struct {
			name string
			opts jit.Options
		}{{"exec-checked", jit.Options{}}, {"exec-unchecked", jit.Options{Unchecked: true}}} {
			b.Run(bm.Name+"/"+m.name, func(b *testing.B) {
				p, err := jit.Compile(vp, &m.opts)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				runSet(b, p, bm)
			})
		}
		coll.Close()
	}
}

func runSet(b *testing.B, p enginebench.Execer, bm *benchset.Benchmark) {
	ctx := bm.Input()
	env := vm.NewEnv()
	env.SetContext(ctx)
	if r0, err := p.Exec(env); err != nil || r0 != bm.Want {
		b.Fatalf("%d, %v; want %d", r0, err, bm.Want)
	}
	b.ResetTimer()
	stop := enginebench.CPU(b)
	for b.Loop() {
		p.Exec(env)
	}
	stop()
}
