package filter_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// FuzzCompile compiles arbitrary expressions against a fixed record: no
// panic, errors carry a column, and every accepted expression stays
// within the cost model (its code no longer than the estimate, the
// verifier's work linear in it), passes the verifier and runs on both
// engines as Eval says.
func FuzzCompile(f *testing.F) {
	for _, e := range validExprs {
		f.Add(e)
	}
	for _, tc := range invalidExprs {
		f.Add(tc.expr)
	}
	for _, e := range []string{`name == "*a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z*a*b*c*d*e*f*"`,
		`name == "*` + strings.Repeat("ab", 20) + `*" || name < tag || g < f`, strings.Repeat("(g < 1 || ", 30) + "a" + strings.Repeat(")", 30)} {
		f.Add(e)
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
		if n, est := len(flt.Instructions()), filter.Estimate(expr, fields); n > est || est > filter.DefaultMaxInstructions {
			t.Fatalf("Compile(%q): %d instructions, estimated %d", expr, n, est)
		}
		e := load(t, flt)
		r := rand.New(rand.NewPCG(uint64(len(expr)), 7))
		for range 8 {
			e.check(t, flt, fields, randomRecord(r, fields))
		}
	})
}
