package filter_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// BenchmarkFilter measures the per-event cost of AND-chains of integer
// predicates, biased true (every predicate holds) and biased false (the
// first fails), for a hand-written Go filter, the interpreter and the
// JIT, and of a string pattern.
func BenchmarkFilter(b *testing.B) {
	fields, err := filter.ParseSpec("v0:u32,v1:u32,v2:u32,v3:u32,v4:u32,v5:u32,v6:u32,v7:u32,name:string[32]")
	if err != nil {
		b.Fatal(err)
	}
	rec := make([]byte, 64)
	for i := range 8 {
		binary.LittleEndian.PutUint32(rec[4*i:], uint32(i+1))
	}
	copy(rec[32:], "nginx-worker-12")
	for _, n := range []int{1, 2, 4, 8} {
		for _, bias := range []string{"true", "false"} {
			var preds []string
			want := make([]uint32, n) // the predicates' constants
			for i := range n {
				want[i] = uint32(i + 1)
				if bias == "false" && i == 0 {
					want[i] = 99
				}
				preds = append(preds, fmt.Sprintf("v%d == %d", i, want[i]))
			}
			expr := strings.Join(preds, " && ")
			// What one would write by hand for this filter.
			benchEngines(b, fmt.Sprintf("and%d/%s", n, bias), expr, fields, rec, func(r []byte) bool {
				for i, w := range want {
					if binary.LittleEndian.Uint32(r[4*i:]) != w {
						return false
					}
				}
				return true
			})
		}
	}
	benchEngines(b, "glob", `name == "nginx*worker*"`, fields, rec, func(r []byte) bool {
		s := string(r[32:64])
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		rest, ok := strings.CutPrefix(s, "nginx")
		return ok && strings.Contains(rest, "worker")
	})
}

func benchEngines(b *testing.B, name, expr string, fields []filter.Field, rec []byte, goFilter func([]byte) bool) {
	f, err := filter.Compile(expr, fields)
	if err != nil {
		b.Fatal(err)
	}
	e := load(b, f)
	mem := rec[:f.RecordSize()]
	want, _ := filter.Eval(expr, fields, rec)
	if goFilter(rec) != want {
		b.Fatalf("%s: the Go filter disagrees with Eval", name)
	}
	b.Run(name+"/go", func(b *testing.B) {
		for b.Loop() {
			goFilter(mem)
		}
	})
	b.Run(name+"/interpreter", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.interp.Run(mem); err != nil {
				b.Fatal(err)
			}
		}
	})
	if e.jit != nil {
		// The way tracepoints call a filter's code: through its Direct
		// func where it has one (amd64), else Run.
		run := e.jit.Direct()
		if run == nil {
			run = e.jit.Run
		}
		b.Run(name+"/jit", func(b *testing.B) {
			for b.Loop() {
				if _, err := run(mem); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
