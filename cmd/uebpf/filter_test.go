package main

import (
	"strings"
	"testing"
)

func TestFilterEval(t *testing.T) {
	const spec = "a:s32,u:u64,f:f64,g:f32,name:string[8],ok:bool"
	events := strings.Join([]string{
		`{"a": 1, "name": "foobar"}`,
		`{"a": 2, "name": "x"}`,
		`{"a": -1, "name": "foo"}`,
		`{"u": 18446744073709551615}`,
		`{"u": 18446744073709551614, "f": 0.5}`,
		`{"f": "NaN", "g": -0.0}`,
		`{"name": "foo*barx", "ok": true}`,
		``,
	}, "\n")
	cases := []struct {
		expr []string
		want string
	}{
		{[]string{`a == 1`}, "1 0 0 0 0 0 0"},
		{[]string{"--", `-a == 1`}, "0 0 1 0 0 0 0"},
		{[]string{`name`, `==`, `"foo*"`}, "1 0 1 0 0 0 1"},
		{[]string{`name == "foo\*bar*"`}, "0 0 0 0 0 0 1"},
		{[]string{`u == 0xffffffffffffffff`}, "0 0 0 1 0 0 0"},
		{[]string{`u == -2`}, "0 0 0 0 1 0 0"},
		{[]string{`f != f || f > 0.25`}, "0 0 0 0 1 1 0"},
		{[]string{`g == 0 && ok`}, "0 0 0 0 0 0 1"},
		{[]string{`a & 2 == 2`}, "0 1 1 0 0 0 0"},
	}
	for _, engine := range []string{"interpreter", "jit"} {
		for _, tc := range cases {
			args := append([]string{"filter", "eval", "--fields", spec, "--engine", engine}, tc.expr...)
			code, out, stderr := runCLI(t, events, args...)
			got := strings.Join(strings.Fields(out), " ")
			if code != 0 || got != tc.want {
				t.Errorf("%s %q: status %d, output %q (stderr %q), want %q", engine, tc.expr, code, got, stderr, tc.want)
			}
		}
	}
}

func TestFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"filter", "eval", "--fields", "a:s32", `a == "x"`}, "column 3"},
		{[]string{"filter", "eval", "--fields", "a:s32", "a ==="}, "column 5"},
		{[]string{"filter", "eval", "--fields", "a:s32", "b == 1"}, "column 1"},
		{[]string{"filter", "explain", "--fields", "a:s32", "(a"}, "column 3"},
		{[]string{"filter", "eval", "--fields", "a:x32", "a"}, "unknown type"},
		{[]string{"filter", "eval", "a"}, "--fields"},
		{[]string{"filter", "eval", "--fields", "a:s32", "--engine", "nope", "a"}, "unknown engine"},
		{[]string{"filter", "frobnicate"}, "want one of: eval, explain"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: status %d, stderr %q; want status 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// A bad event is an error of the run, not of the command line.
	code, _, stderr := runCLI(t, `{"zz": 1}`, "filter", "eval", "--fields", "a:s32", "a")
	if code != 1 || !strings.Contains(stderr, `no field "zz"`) {
		t.Errorf("unknown event field: status %d, stderr %q", code, stderr)
	}
}

func TestFilterExplain(t *testing.T) {
	code, out, stderr := runCLI(t, "", "filter", "explain", "--fields", "a:s32,b:u8", "a == 1 && b")
	if code != 0 || !strings.Contains(out, "exit") || !strings.Contains(out, "ldxw %r2, [%r1]") {
		t.Errorf("status %d, output %q, stderr %q", code, out, stderr)
	}
}
