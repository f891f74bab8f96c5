package filter_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

func TestParseSpec(t *testing.T) {
	got, err := filter.ParseSpec("a:u8, b:u32,c:string[3],d:f64,e:s16,$ctx.vtid:s32,f:f32,ok:bool")
	if err != nil {
		t.Fatal(err)
	}
	want := []filter.Field{
		{"a", filter.Unsigned, 1, 0}, {"b", filter.Unsigned, 4, 4}, {"c", filter.String, 3, 8},
		{"d", filter.Float, 8, 16}, {"e", filter.Signed, 2, 24}, {"$ctx.vtid", filter.Signed, 4, 28},
		{"f", filter.Float, 4, 32}, {"ok", filter.Bool, 1, 36},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	for _, bad := range []string{"", "a", "a:", ":u8", "a:u7", "a:string[0]", "a:string[x]", "a:u8,a:u8", "a:string[99999]"} {
		if _, err := filter.ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) succeeded", bad)
		}
	}
}

func TestUsesAndRecordSize(t *testing.T) {
	fields := testFields(t)
	for _, tc := range []struct {
		expr string
		uses []string
		size int
	}{
		{"1", nil, 0},
		{"a == 1", []string{"a"}, 4},
		{`$ctx.vtid == 3 && a || $ctx.vtid == 4`, []string{"$ctx.vtid", "a"}, 68},
		{`name == "x*"`, []string{"name"}, 60},
	} {
		f, err := filter.Compile(tc.expr, fields)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f.Uses(), tc.uses) || f.RecordSize() != tc.size || f.Expr() != tc.expr {
			t.Errorf("%q: uses %q, size %d; want %q, %d", tc.expr, f.Uses(), f.RecordSize(), tc.uses, tc.size)
		}
	}
}

// TestLongStrings checks that unrolled string code for large fields
// still passes the verifier and agrees with Eval.
func TestLongStrings(t *testing.T) {
	fields, err := filter.ParseSpec("p:string[256],q:string[200],n:s32")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, expr := range []string{
		`p == "*a*b*c*"`, `p == "/usr/*/bin*/x"`, `p == tail_is_not_a_field || 1`, `p < q`, `p == q`,
		`p >= "` + strings.Repeat("ab", 100) + `"`, `p == "*abababab*ba"`, `n == 1 && p != "*zz*" && q == "ab*"`,
	} {
		f, err := filter.Compile(expr, fields)
		if err != nil {
			if strings.Contains(expr, "tail_is_not") {
				continue
			}
			t.Fatalf("%q: %v", expr, err)
		}
		e := load(t, f)
		for range 200 {
			rec := randomRecord(r, fields)
			if r.IntN(2) == 0 {
				s := []byte(strings.Repeat("ab", r.IntN(140)) + "c")
				s[r.IntN(len(s))] = "abcz/"[r.IntN(5)]
				copy(rec, s)
			}
			e.check(t, f, fields, rec)
		}
	}
}
