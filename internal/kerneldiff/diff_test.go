package kerneldiff

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	p := Generate(1, Config{V4: true})
	base := func(engine string, bits int, r0 uint64) Outcome {
		return Outcome{Engine: engine, R0: r0, R0Bits: bits, Value: append([]byte(nil), p.Value...)}
	}
	tests := []struct {
		name   string
		change func(outs []Outcome)
		want   []string // substrings of the report; none: agreement
	}{
		{"agree", func([]Outcome) {}, nil},
		{"kernel sees the low 32 bits", func(o []Outcome) { o[0].R0 = 0x89abcdef }, nil},
		{"return value", func(o []Outcome) { o[2].R0 ^= 1 << 40 },
			[]string{"return value:", "interpreter 0x0000000089abcdef", "jit 0x0000010089abcdef"}},
		{"return value low bits vs kernel", func(o []Outcome) { o[0].R0 = 0x89abcdee },
			[]string{"return value:", "kernel 0x89abcdee"}},
		{"register", func(o []Outcome) {
			binary.LittleEndian.PutUint64(o[3].Value[RegsOffset+3*8:], 0xdead)
		}, []string{"r3 (element+152):", "jit-unchecked 0x000000000000dead"}},
		{"stack", func(o []Outcome) { o[1].Value[StackOffset+8] ^= 0x80 }, []string{"stack area[8] (element+216)"}},
		{"data", func(o []Outcome) { o[0].Value[17] ^= 1 }, []string{"data[16] (element+16)"}},
		{"error", func(o []Outcome) { o[2].Err = errors.New("boom") }, []string{"jit: error: boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := []Outcome{base(EngineKernel, 32, 0x89abcdef), base(EngineInterpreter, 64, 0x89abcdef),
				base(EngineJIT, 64, 0x89abcdef), base(EngineJITUnchecked, 64, 0x89abcdef)}
			outs[0].R0 = 0x89abcdef
			tt.change(outs)
			m := Compare(p, outs)
			if tt.want == nil {
				if m != nil {
					t.Fatalf("unexpected mismatch:\n%v", m)
				}
				return
			}
			if m == nil {
				t.Fatal("no mismatch reported")
			}
			report := m.Error()
			for _, w := range append(tt.want, "seed 1:", "    0: ") {
				if !strings.Contains(report, w) {
					t.Errorf("report lacks %q:\n%s", w, report)
				}
			}
		})
	}
}
