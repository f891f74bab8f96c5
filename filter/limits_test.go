package filter_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// limitSpec is the record of the limit tests: the largest string field
// there may be.
const limitSpec = "name:string[1024],other:string[1024],tag:string[16],a:u32,g:f32"

func limitFields(t testing.TB) []filter.Field {
	t.Helper()
	fields, err := filter.ParseSpec(limitSpec)
	if err != nil {
		t.Fatal(err)
	}
	return fields
}

// repeatTo joins copies of part with sep up to about n bytes.
func repeatTo(n int, part, sep string) string {
	return strings.Repeat(part+sep, n/(len(part)+len(sep))) + part
}

// Each limit refuses with an *Error wrapping ErrLimit, at the column
// where the limit is passed, naming the field of Limits that raises it.
func TestLimitRefusals(t *testing.T) {
	fields := limitFields(t)
	for _, tc := range []struct {
		name string
		lim  filter.Limits
		expr string
		col  int
		msg  string
	}{
		{"bytes", filter.Limits{}, strings.Repeat("a == 1 || ", 7000), 65537, "expression of 70000 bytes (at most 65536: filter.Limits.MaxBytes)"},
		{"bytes/custom", filter.Limits{MaxBytes: 10}, "a == 1 || a == 2", 11, "expression of 16 bytes (at most 10: filter.Limits.MaxBytes)"},
		{"depth/parens", filter.Limits{}, strings.Repeat("(", 101) + "a" + strings.Repeat(")", 101), 101, "nests more than 100 deep (filter.Limits.MaxDepth)"},
		{"depth/custom", filter.Limits{MaxDepth: 3}, "!(-(~a))", 4, "nests more than 3 deep (filter.Limits.MaxDepth)"},
		{"nodes", filter.Limits{}, strings.Repeat("a|", 8192) + "a", 16385, "more than 16384 operands and operators (filter.Limits.MaxNodes)"},
		{"nodes/custom", filter.Limits{MaxNodes: 5}, "a == 1 || a == 2", 13, "more than 5 operands and operators (filter.Limits.MaxNodes)"},
		{"stars", filter.Limits{}, `tag == "` + strings.Repeat("*a", 40) + `"`, 9 + 2*32, "pattern with more than 32 stars (filter.Limits.MaxGlobStars)"},
		{"stars/custom", filter.Limits{MaxGlobStars: 2}, `tag == "a*b*c\*d*"`, 17, "more than 2 stars"},
		{"literal", filter.Limits{}, `name < "` + strings.Repeat("x", 5000) + `"`, 9 + 4096, "string literal longer than 4096 bytes (filter.Limits.MaxLiteralBytes)"},
		{"literal/escapes", filter.Limits{MaxLiteralBytes: 3}, `tag == "a\*bc"`, 13, "longer than 3 bytes (filter.Limits.MaxLiteralBytes)"},
		{"code/glob", filter.Limits{}, `a == 1 && name == "*abcdefghijklmnop*"`, 19,
			"the filter would generate about 34325 instructions (at most 32767: filter.Limits.MaxInstructions): simplify the glob or compare a shorter field"},
		{"code/fields", filter.Limits{}, repeatTo(120, "name < other", " || "), 8, "compare shorter string fields"},
		{"code/floats", filter.Limits{MaxInstructions: 1000}, repeatTo(400, "g < 1.5", " || "), 3, "use fewer comparisons of floats"},
		{"code/custom", filter.Limits{MaxInstructions: 20}, repeatTo(100, "a == 1", " || "), 1, "(at most 20: filter.Limits.MaxInstructions): use fewer comparisons"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := filter.CompileLimits(tc.expr, fields, tc.lim)
			var fe *filter.Error
			if !errors.As(err, &fe) || !errors.Is(err, filter.ErrLimit) {
				t.Fatalf("error %v, want a *filter.Error wrapping ErrLimit", err)
			}
			if fe.Column != tc.col || !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("%v\nwant column %d: ...%s...", err, tc.col, tc.msg)
			}
		})
	}
}

// A limit raised lets through what the default refuses; limits out of
// range are refused as such.
func TestLimitsRaised(t *testing.T) {
	fields := limitFields(t)
	for _, tc := range []struct {
		expr string
		lim  filter.Limits
	}{
		{repeatTo(70000, "a == 1", " || "), filter.Limits{MaxBytes: 1 << 17, MaxNodes: 1 << 15}},
		{strings.Repeat("(", 150) + "a" + strings.Repeat(")", 150), filter.Limits{MaxDepth: 150}},
		{`tag == "` + strings.Repeat("*a", 40) + `"`, filter.Limits{MaxGlobStars: 40}},
	} {
		if _, err := filter.Compile(tc.expr, fields); !errors.Is(err, filter.ErrLimit) {
			t.Errorf("Compile(%.40q): %v, want a limit", tc.expr, err)
		}
		if _, err := filter.CompileLimits(tc.expr, fields, tc.lim); err != nil {
			t.Errorf("CompileLimits(%.40q, %+v): %v", tc.expr, tc.lim, err)
		}
	}
	for _, tc := range []struct {
		lim  filter.Limits
		want string
	}{
		{filter.Limits{MaxDepth: 1001}, "filter: Limits.MaxDepth = 1001 is above its ceiling 1000"},
		{filter.Limits{MaxNodes: 1<<18 + 1}, "filter: Limits.MaxNodes = 262145 is above its ceiling 262144"},
		{filter.Limits{MaxInstructions: 40000}, "filter: Limits.MaxInstructions = 40000 is above its ceiling 32767"},
		{filter.Limits{MaxBytes: -1}, "filter: Limits.MaxBytes = -1 is negative"},
	} {
		if _, err := filter.CompileLimits("a", fields, tc.lim); err == nil || err.Error() != tc.want {
			t.Errorf("CompileLimits(%+v): %v, want %q", tc.lim, err, tc.want)
		}
	}
}

// Errors that are not about limits do not wrap ErrLimit.
func TestOtherErrorsAreNotLimits(t *testing.T) {
	fields := testFields(t)
	for _, tc := range invalidExprs {
		_, err := filter.Compile(tc.expr, fields)
		if errors.Is(err, filter.ErrLimit) != strings.Contains(tc.msg, "nests more than") {
			t.Errorf("Compile(%.40q): %v: ErrLimit %v", tc.expr, err, errors.Is(err, filter.ErrLimit))
		}
	}
}

func ExampleCompileLimits() {
	fields, _ := filter.ParseSpec("path:string[1024],short:string[256]")
	_, err := filter.Compile(`path == "*/node_modules/.bin/*"`, fields)
	fmt.Println(err)
	// The same pattern over a shorter field costs a quarter.
	f, err := filter.Compile(`short == "*/node_modules/.bin/*"`, fields)
	fmt.Println(len(f.Instructions()), err)
	// A caller that wants smaller filters lowers the limits.
	_, err = filter.CompileLimits(`short == "*/node_modules/.bin/*"`, fields, filter.Limits{MaxInstructions: 4096})
	fmt.Println(err)
	// Output:
	// column 9: the filter would generate about 40255 instructions (at most 32767: filter.Limits.MaxInstructions): simplify the glob or compare a shorter field
	// 9531 <nil>
	// column 10: the filter would generate about 9535 instructions (at most 4096: filter.Limits.MaxInstructions): simplify the glob or compare a shorter field
}
