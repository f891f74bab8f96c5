package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/internal/benchset"
	"github.com/uebpf/uebpf/jit"
)

// A child round of each Go variant prints the program's right result
// and a time, in the form the parent reads.
func TestChildRound(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	var want uint64
	for _, bm := range benchset.Set {
		if bm.Name == "simple" {
			want = bm.Want
		}
	}
	for i, v := range goVariants {
		t.Run(v.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := runChild(&out, "simple", i); err != nil {
				t.Fatal(err)
			}
			ns, r, err := parseTimes(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if r != want || len(ns) != 1 || ns[0] <= 0 {
				t.Errorf("result %d, times %v; want %d and one time", r, ns, want)
			}
		})
	}
}

func TestChildErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		variant int
		err     string
	}{
		{"no such program", 0, "no benchmark"},
		{"simple", len(goVariants), "no variant"},
	} {
		if err := runChild(new(bytes.Buffer), tc.name, tc.variant); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("runChild(%q, %d): %v, want %q", tc.name, tc.variant, err, tc.err)
		}
	}
}

func TestParseTimes(t *testing.T) {
	for _, tc := range []struct {
		out    string
		ns     int
		result uint64
		err    bool
	}{
		{"result 7\nns 1.5\nns 2.5\n", 2, 7, false},
		{"result 7\n", 0, 0, true},
		{"result x\nns 1\n", 0, 0, true},
		{"ns one\n", 0, 0, true},
	} {
		ns, r, err := parseTimes([]byte(tc.out))
		if (err != nil) != tc.err || len(ns) != tc.ns || r != tc.result {
			t.Errorf("%q: %v, %d, %v", tc.out, ns, r, err)
		}
	}
}
