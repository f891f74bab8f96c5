package filter_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// costCases are expressions over costSpec whose code the cost model
// must bound: long strings and patterns of every shape.
const costSpec = "p:string[256],q:string[200],r:string[1],n:s32,g:f32,f:f64,name:string[1024],tag:string[16]"

var costCases = []string{
	`p == "*a*b*c*"`, `p == "/usr/*/bin*/x"`, `p < q`, `p == q`, `q > p`, `p == r`, `r == "*"`, `r == "a*"`, `r == "*a"`,
	`r == "ab*"`, `r == "*a*"`, `r == "a"`, `r == ""`, `r < "abc"`, `p >= "` + strings.Repeat("ab", 100) + `"`,
	`p == "` + strings.Repeat("x", 300) + `"`, `p == "*abababab*ba"`, `n == 1 && p != "*zz*" && q == "ab*"`,
	`name == "*abc*"`, `name == "*a*b*"`, `name == "*/usr/lib/*"`, `name == "a*"`, `name == "*a"`, `name == "**"`,
	`name == "*` + strings.Repeat("a", 1024) + `"`, `name == "*` + strings.Repeat("a", 1025) + `*"`, `name == "***x***"`,
	`tag == "*a*b*c*d*e*f*g*h*"`, `tag == "a*b*c*d*e*f*g*h*i"`, `tag == "` + strings.Repeat("*a", 16) + `"`,
	`g < 1 || g > n || f == g || -g < f || n < f || 2.5 > n`, `(n | 1) == (n << 2) || ~n || -n`,
	`!(n & (n | (n ^ (n << (n >> 1)))))`, `n == 0x100000000 || n < -5000000000 || n > 1.5e10`,
	`tag == name || name == tag || tag < "x" || "x" > tag`,
}

// The cost model bounds the code of every expression the tests compile,
// and is close to it for the strings that dominate large filters.
func TestCostBoundsCode(t *testing.T) {
	spec, err := filter.ParseSpec(costSpec)
	if err != nil {
		t.Fatal(err)
	}
	lspec, err := filter.ParseSpec(lttngSpec)
	if err != nil {
		t.Fatal(err)
	}
	tfields := testFields(t)
	type tc struct {
		expr   string
		fields []filter.Field
	}
	var cases []tc
	for _, e := range validExprs {
		cases = append(cases, tc{e, tfields})
	}
	for _, e := range costCases {
		cases = append(cases, tc{e, spec})
	}
	g := &exprGen{r: rand.New(rand.NewPCG(5, 6))}
	for range 3000 {
		cases = append(cases, tc{g.top().String(), lspec})
	}
	worst := 0.0
	for _, c := range cases {
		f, err := filter.Compile(c.expr, c.fields)
		if err != nil {
			continue
		}
		n, est := len(f.Instructions()), filter.Estimate(c.expr, c.fields)
		if est < n {
			t.Errorf("%q: %d instructions, the cost model says at most %d", c.expr, n, est)
		}
		if n > 500 {
			worst = max(worst, float64(est)/float64(n))
			t.Logf("%.60q %d %d", c.expr, n, est)
		}
	}
	t.Logf("worst ratio %.3f", worst)
}
