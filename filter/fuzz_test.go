package filter_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// FuzzCompile compiles arbitrary expressions against a fixed record: no
// panic, errors carry a column, and every accepted expression passes the
// verifier and runs on both engines as Eval says.
func FuzzCompile(f *testing.F) {
	for _, e := range validExprs {
		f.Add(e)
	}
	for _, tc := range invalidExprs {
		f.Add(tc.expr)
	}
	fields := testFields(f)
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := filter.Compile(expr, fields)
		if err != nil {
			var fe *filter.Error
			if !errors.As(err, &fe) || fe.Column < 1 || fe.Column > len(expr)+1 {
				t.Fatalf("Compile(%q): %v, want an *Error with a column in the expression", expr, err)
			}
			return
		}
		e := load(t, flt)
		r := rand.New(rand.NewPCG(uint64(len(expr)), 7))
		for range 8 {
			e.check(t, flt, fields, randomRecord(r, fields))
		}
	})
}
