package conformance

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

const sample = `# Copyright (c) Somebody
# SPDX-License-Identifier: MIT
-- c
int main() { return 0; }
-- asm
mov %r0, %r2 # length
exit
-- mem
00 01 fe FF
0a
-- no register offset
call instruction
-- raw
0x00000000000020bf
149
-- result
0x5
`

func TestParse(t *testing.T) {
	tc, err := Parse("mem-len", strings.NewReader(strings.ReplaceAll(sample, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	if tc.Name != "mem-len" {
		t.Errorf("Name = %q", tc.Name)
	}
	if want := "mov %r0, %r2 # length\nexit\n"; tc.Asm != want {
		t.Errorf("Asm = %q, want %q", tc.Asm, want)
	}
	if tc.AsmLine != 6 {
		t.Errorf("AsmLine = %d, want 6", tc.AsmLine)
	}
	if want := []byte{0x00, 0x01, 0xfe, 0xff, 0x0a}; !bytes.Equal(tc.Mem, want) {
		t.Errorf("Mem = % x, want % x", tc.Mem, want)
	}
	if !tc.HasResult || tc.Result != 5 {
		t.Errorf("Result = %#x (HasResult %v), want 0x5", tc.Result, tc.HasResult)
	}
	wantRaw := binary.LittleEndian.AppendUint64(nil, 0x20bf)
	wantRaw = binary.LittleEndian.AppendUint64(wantRaw, 149)
	if !bytes.Equal(tc.Raw, wantRaw) {
		t.Errorf("Raw = % x, want % x", tc.Raw, wantRaw)
	}
	if got := tc.Sections["no register offset"]; got != "call instruction\n" {
		t.Errorf(`Sections["no register offset"] = %q`, got)
	}
	if got := tc.Sections["c"]; got != "int main() { return 0; }\n" {
		t.Errorf(`Sections["c"] = %q`, got)
	}
}

func TestParseOptionalSections(t *testing.T) {
	tests := []struct {
		name, text string
		check      func(*Test) string
	}{
		{"no mem", "-- asm\nexit\n-- result\n0x0\n", func(tc *Test) string {
			if tc.Mem != nil || tc.Raw != nil {
				return "Mem and Raw should be nil"
			}
			return ""
		}},
		{"decimal result", "-- asm\nexit\n-- result\n0\n", func(tc *Test) string {
			if !tc.HasResult || tc.Result != 0 {
				return "want result 0"
			}
			return ""
		}},
		{"decimal result is not hex", "-- asm\nexit\n-- result\n10\n", func(tc *Test) string {
			if tc.Result != 10 {
				return "want result 10"
			}
			return ""
		}},
		{"no result", "-- asm\nexit\n", func(tc *Test) string {
			if tc.HasResult {
				return "want HasResult false"
			}
			return ""
		}},
		{"error text", "-- asm\nexit\n-- error\n  Division by zero\n", func(tc *Test) string {
			if tc.ErrorText != "Division by zero" {
				return "ErrorText = " + tc.ErrorText
			}
			return ""
		}},
		{"raw only", "-- raw\n0x95\n", func(tc *Test) string {
			if len(tc.Raw) != 8 || tc.Raw[0] != 0x95 {
				return "want one exit slot"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, err := Parse(tt.name, strings.NewReader(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(tc); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"unknown section", "-- asm\nexit\n-- reslt\n0x1\n", `line 3: unknown section "reslt"`},
		{"repeated section", "-- asm\nexit\n-- asm\nexit\n", `line 3: section "asm" repeats (first at line 1)`},
		{"bad mem byte", "-- asm\nexit\n-- mem\n00 zz\n", `section "mem" (line 3): "zz" is not a hex byte`},
		{"mem word", "-- asm\nexit\n-- mem\n0102\n", `"0102" is not a hex byte`},
		{"bad result", "-- asm\nexit\n-- result\n0xg\n", `section "result" (line 3): "0xg" is not a 64-bit number`},
		{"two results", "-- asm\nexit\n-- result\n1 2\n", "want one value, got 2"},
		{"bad raw", "-- raw\n0x1ffffffffffffffff\n", "is not a 64-bit number"},
		{"no program", "# just a comment\n-- result\n0x1\n", `no "-- asm" or "-- raw" section`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.name, strings.NewReader(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestInstructionsReportFileLines(t *testing.T) {
	tc, err := Parse("bad", strings.NewReader("# header\n-- asm\nmov %r0, 1\nfoo\n-- result\n0x1\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tc.Instructions()
	if err == nil || !strings.Contains(err.Error(), `bad: line 4: unknown mnemonic "foo"`) {
		t.Fatalf("Instructions error = %v, want it at line 4 of the file", err)
	}
}

func TestInstructionsPrefersRaw(t *testing.T) {
	tc, err := Parse("raw", strings.NewReader("-- asm\nmov %r0, 1\nexit\n-- raw\n0x95\n"))
	if err != nil {
		t.Fatal(err)
	}
	insns, err := tc.Instructions()
	if err != nil {
		t.Fatal(err)
	}
	if len(insns) != 1 || insns[0].Opcode != 0x95 {
		t.Fatalf("Instructions = %+v, want the single raw exit", insns)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("-- asm\nexit\n-- result\n0x0\n"))
	if dir, ok := SharedDir(); ok {
		if tests, err := LoadDir(dir); err == nil {
			for _, tc := range tests[:min(len(tests), 40)] {
				f.Add([]byte("-- asm\n" + tc.Asm + "-- mem\n" + PluginHex(tc.Mem) + "\n"))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tc, err := Parse("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		back, err := ParsePluginHex(PluginHex(tc.Mem))
		if err != nil || !bytes.Equal(back, tc.Mem) {
			t.Fatalf("plugin hex round trip of % x gave % x, %v", tc.Mem, back, err)
		}
		_, _ = tc.Instructions() // must not panic
	})
}
