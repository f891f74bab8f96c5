package enginebench_test

import (
	"bytes"
	"testing"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/benchset"
	"github.com/uebpf/uebpf/internal/enginebench"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// BenchmarkSetEngines runs the standard set's programs that need no map
// set-up on the interpreter and the JIT in both modes, through Exec with a
// reused Env (no per-run pool or Reset), next to the native Go
// equivalents, all with cpu-ns/op. The programs with maps and the fixed
// cost of uebpf.Program.Run are in internal/benchset.
func BenchmarkSetEngines(b *testing.B) {
	for _, bm := range benchset.Set {
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
		b.Run(bm.Name+"/interpreter", func(b *testing.B) { runSet(b, vp, bm) })
		for _, m := range []struct {
			name string
			opts jit.Options
		}{{"jit-checked", jit.Options{}}, {"jit-unchecked", jit.Options{Unchecked: true}}} {
			b.Run(bm.Name+"/"+m.name, func(b *testing.B) {
				p, err := jit.Compile(vp, &m.opts)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				runSet(b, p, bm)
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
