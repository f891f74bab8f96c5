package filter_test

import (
	"math/rand/v2"
	"testing"

	"github.com/uebpf/uebpf/filter"
)

// validExprs compile, and must agree with Eval on random records.
var validExprs = []string{
	"1", "0", "a", "!a", "a == 1", "a != 1", "a < 0", "a <= 0", "a > 40", "a >= 500",
	"a & 2 == 2", "(a & 2) == 2", "a & (2 == 2)", "b | 1", "c ^ 0xff", "~a", "-a", "+a", "- -a",
	"u", "u == 0xffffffffffffffff", "u == -1", "u < 0", "u > 0x7fffffffffffffff", "s == -9223372036854775808",
	"s < 0x8000000000000000", "i8 == -1", "i8 < -127", "i16 >= 32767", "x == 4294967295", "x < 0",
	"a << 2 == 4", "a << b", "a >> b", "u >> 63", "u << 63", "1 << a", "a << 64", "a >> -1", "0 && (a << 64)",
	"(a << 64) || 1", "a == 1 || (a & 1)", "a && b", "a || b", "!a && !b", "!(a || b)", "a && b || c",
	"a || b && c", "(a || b) && c", "a == 1 && b == 2 || c == 3", "a < b", "a <= i8", "u == s", "u < s",
	"(a == 1) + 0 == 1", "(a == 1) == (b == 1)", "(a < b) < c", "a == b == c",
	"a == 0x10", "a == 010", "a == 08", "a == 0", "a == 00", "u == 18446744073709551615",
	"f", "!f", "-f", "f == 0", "f != 0", "f < 0", "f <= 0.5", "f > -0.5", "f >= 42", "f == -0.0",
	"f == g", "f < g", "f > g", "g", "!g", "g == 0.5", "g < 1e-40", "g > -1e-45", "g == g", "g != g",
	"f != f", "f == f", "-f == f", "a == f", "a < f", "a > f", "f < a", "f >= a", "u == f", "u < f",
	"s > f", "s <= f", "g == a", "g < b", "a == 2.5", "a < 2.5", "a <= 2.5", "a > 2.5", "a >= 2.5",
	"a < -2.5", "a >= -2.5", "a == 42.0", "s < 9.3e18", "s > -9.3e18", "s >= -9223372036854775808.0",
	"u == 1e300", "a < 1.0/0", "f < 1e308", "1.5 > f", "0.5 > (a | 0)", "f && a", "f || a", "a && f",
	"!f || !g", "f && g", "-g < 0", "+f == f", "(f == 1) < 2.5", "(a & 1) < f", "h == f", "h < f",
	"s == f && f != 0", "a == 2.5e0", "a == .5", "a == 5.", "a > 1e3", "u < 1.8446744073709552e19",
	`name == "foo"`, `name != "foo"`, `name == "foo*"`, `name == "*foo"`, `name == "*foo*"`,
	`name == "foo*bar*"`, `name == "foo*bar"`, `name == "*bar*baz"`, `name == "*"`, `name == "**"`,
	`name == "f*o*o"`, `name == "a\*b"`, `name == "foo\\bar"`, `name == "a\"b"`, `name == ""`,
	`name != ""`, `name < "foo"`, `name <= "foo"`, `name > "foo"`, `name >= "abc"`, `name < "ab"`,
	`"foo" == name`, `"foo" < name`, `"f*" == name`, `name == "0123456789abcdef"`,
	`name == "0123456789abcdef0"`, `name < "0123456789abcdef0"`, `name == "0123456789abcde*"`,
	`name == tag`, `name != tag`, `name < tag`, `name <= tag`, `name > tag`, `tag >= name`,
	`tag == "abc*"`, `tag == "*d"`, `tag == "ab*cd"`, `tag == "a*b*c*d"`, `tag == "abcde*"`,
	`name == "fo*fo*"`, `name == "*o*o*"`, `name == "*bar"`, `name == "foo*foo"`,
	`$ctx.vtid == 42`, `$ctx.vtid > 0 && name == "nginx*"`, `(status_is_a_test == 1)`,
	`"abc" == "abc"`, `"abc" < "abd"`, `"a*" == "abc"`, `"abc" != "a*"`,
	"a == 1 && f > 0.5 && name == \"foo*\" || !(b & 4) && g != g",
	"((((((a))))))", "a | b | c | x | i8 | i16 | u | s", "a | (b | (c | (x | (i8 | (i16 | (u | (s | 1))))))) == 0",
	"(a & (b & (c & (x & (i8 & (i16 & (u & (s & 1)))))))) == 0",
	"1 << 63 == -9223372036854775808", "0x7fffffffffffffff + 0", "3 > 2.5", "-0.0 == 0.0", "0.0/0",
}

func TestCompileAgreesWithEval(t *testing.T) {
	fields := testFields(t)
	fields = append(fields, filter.Field{Name: "status_is_a_test", Kind: filter.Unsigned, Size: 1, Offset: 0})
	r := newRand()
	n := 0
	for _, expr := range validExprs {
		f, err := filter.Compile(expr, fields)
		if err != nil {
			// Some entries document errors: listed in invalid cases too.
			if _, ok := err.(*filter.Error); ok && expectedInvalid[expr] {
				continue
			}
			t.Errorf("Compile(%q): %v", expr, err)
			continue
		}
		n++
		e := load(t, f)
		for range 300 {
			e.check(t, f, fields, randomRecord(r, fields))
		}
	}
	t.Logf("%d expressions", n)
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

var expectedInvalid = map[string]bool{
	"(a == 1) + 0 == 1": true, "0x7fffffffffffffff + 0": true, "a < 1.0/0": true, "0.0/0": true,
	"a == 08": true,
}
