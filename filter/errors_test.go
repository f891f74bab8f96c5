package filter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// invalidExprs are refused with an *Error at the column given.
var invalidExprs = []struct {
	expr string
	col  int
	msg  string
}{
	{"", 1, "want a field"},
	{"a ==", 5, "want a field"},
	{"(a == 1", 8, "want )"},
	{"a == 1)", 7, "unexpected"},
	{"a @ 1", 3, "unexpected character"},
	{"nosuch == 1", 1, "unknown field"},
	{"a == nosuch", 6, "unknown field"},
	{`a == "x"`, 3, "cannot compare"},
	{`"x" != f`, 5, "cannot compare"},
	{"f & 1", 3, "operator & does not apply to a float"},
	{"a | f", 3, "operator | does not apply to a float"},
	{"f << 1", 3, "does not apply to a float"},
	{"1 >> g", 3, "does not apply to a float"},
	{"~f", 1, "operator ~ does not apply to a float"},
	{`name & 1`, 6, "does not apply to a string"},
	{`~name`, 1, "does not apply to a string"},
	{`-name == "x"`, 1, "operator - does not apply to a string"},
	{`+name == "x"`, 1, "does not apply to a string"},
	{`!name`, 1, "operator ! does not apply to a string"},
	{`name && a`, 6, "operator && does not apply to a string"},
	{`a || name`, 3, "operator || does not apply to a string"},
	{`name`, 1, "a string is not a condition"},
	{`name < "foo*"`, 6, "wildcard"},
	{`name >= "*"`, 6, "wildcard"},
	{`"a*" > name`, 6, "wildcard"},
	{`"a*" == "b*"`, 6, "two wildcard patterns"},
	{`name == "foo`, 9, "unterminated string"},
	{"a + 1", 3, "arithmetic"},
	{"a - 1", 3, "arithmetic"},
	{"a * 2", 3, "arithmetic"},
	{"a / 2", 3, "arithmetic"},
	{"a % 2", 3, "arithmetic"},
	{"a = 1", 3, "assignment"},
	{"a == 08", 6, "bad integer literal"},
	{"a == 0x", 6, "bad integer literal"},
	{"a == 1x", 6, "bad integer literal"},
	{"a == 0x10000000000000000", 6, "does not fit in 64 bits"},
	{"a == 1.5.5", 6, "bad float literal"},
	{"a == 1e", 6, "bad float literal"},
	{"$ctx == 1", 1, "context field"},
	{"$ == 1", 1, "context field"},
	{"$ctx.nosuch == 1", 1, "unknown field"},
	{"a == 1 b", 8, "unexpected"},
	{"()", 2, "want a field"},
	{"a == (", 7, "want a field"},
	{"!", 2, "want a field"},
	{"a ! b", 3, "unexpected"},
	{"a <> b", 4, "unexpected \">\""},
	{"a === b", 5, "unexpected \"=\""},
	{"a &&& b", 5, "unexpected \"&\""},
	{"(a == 1) + 0 == 1", 10, "arithmetic"},
	{strings.Repeat("(", 200) + "a" + strings.Repeat(")", 200), 101, "nests more than"},
	{strings.Repeat("!", 200) + "a", 101, "nests more than"},
}

func TestCompileErrors(t *testing.T) {
	fields := testFields(t)
	for _, tc := range invalidExprs {
		_, err := filter.Compile(tc.expr, fields)
		var fe *filter.Error
		if !errors.As(err, &fe) {
			t.Errorf("Compile(%q) = %v, want a *filter.Error", tc.expr, err)
			continue
		}
		if fe.Column != tc.col || !strings.Contains(fe.Msg, tc.msg) || !strings.Contains(err.Error(), "column ") {
			t.Errorf("Compile(%q): %v, want column %d: ...%s...", tc.expr, err, tc.col, tc.msg)
		}
		if _, err2 := filter.Eval(tc.expr, fields, make([]byte, 128)); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("Eval(%q): %v, want the error of Compile: %v", tc.expr, err2, err)
		}
	}
}

// TestPrecedence checks LTTng's operator precedence, which is not C's,
// by comparing each expression with its parenthesised form.
func TestPrecedence(t *testing.T) {
	fields := testFields(t)
	cases := []struct{ expr, same string }{
		{"a & 2 == 2", "(a & 2) == 2"},
		{"a | 1 == b | 1", "(a | 1) == (b | 1)"},
		{"a ^ b != 0", "(a ^ b) != 0"},
		{"a & b | c", "(a & b) | c"},
		{"a | b & c", "a | (b & c)"},
		{"a ^ b & c", "a ^ (b & c)"},
		{"a | b ^ c", "a | (b ^ c)"},
		{"a << 1 & 6", "(a << 1) & 6"},
		{"a & 6 << 1", "a & (6 << 1)"},
		{"a < b == c < x", "(a < b) == (c < x)"},
		{"a == b < c", "a == (b < c)"},
		{"a | b < c", "(a | b) < c"},
		{"a && b || c && x", "(a && b) || (c && x)"},
		{"a || b && c", "a || (b && c)"},
		{"a == 1 && b == 2", "(a == 1) && (b == 2)"},
		{"!a == 0", "(!a) == 0"},
		{"-a << 1", "(-a) << 1"},
		{"~a & 1", "(~a) & 1"},
		{"a << 1 << 2", "(a << 1) << 2"},
		{"a >> 1 << 1", "(a >> 1) << 1"},
		{"a - -1 == 0", ""}, // binary minus: an error, not unary
	}
	r := newRand()
	for _, tc := range cases {
		if tc.same == "" {
			if _, err := filter.Compile(tc.expr, fields); err == nil {
				t.Errorf("Compile(%q) succeeded", tc.expr)
			}
			continue
		}
		for range 500 {
			rec := randomRecord(r, fields)
			x, err1 := filter.Eval(tc.expr, fields, rec)
			y, err2 := filter.Eval(tc.same, fields, rec)
			if err1 != nil || err2 != nil || x != y {
				t.Fatalf("%q = %v (%v), %q = %v (%v) on %x", tc.expr, x, err1, tc.same, y, err2, rec)
			}
		}
		// And the operators as written, in C's precedence, disagree on
		// some record when the grouping differs.
	}
	// Spot values: a = 3: a & 2 == 2 is (3 & 2) == 2, true; in C it
	// would be 3 & (2 == 2) = 1, also true: use a = 2.
	rec := make([]byte, recordLen(fields))
	rec[0] = 2
	if ok, err := filter.Eval("a & 2 == 2", fields, rec); !ok || err != nil {
		t.Errorf("a & 2 == 2 with a = 2: %v, %v; want true", ok, err)
	}
	if ok, err := filter.Eval("a & (2 == 2)", fields, rec); ok || err != nil {
		t.Errorf("a & (2 == 2) with a = 2: %v, %v; want false", ok, err)
	}
}
