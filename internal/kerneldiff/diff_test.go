package kerneldiff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
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

// A corpus gives back the programs and outcomes written to it, and
// refuses what is not one.
func TestCorpusRoundTrip(t *testing.T) {
	target, err := NewUserspaceTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	var buf bytes.Buffer
	var want []Recorded
	for seed := range uint64(20) {
		p := Generate(seed, Config{V4: true})
		outs, err := target.RunUserspace(p)
		if err != nil {
			t.Fatal(err)
		}
		k := outs[0]
		k.Engine, k.R0Bits = EngineKernel, 32
		if seed == 3 {
			k.Err = errors.New("refused")
		}
		if err := WriteRecorded(&buf, p, k); err != nil {
			t.Fatal(err)
		}
		want = append(want, Recorded{p, k})
	}
	got, err := ReadCorpus(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	for _, r := range got {
		WriteRecorded(&again, r.Program, r.Kernel)
	}
	if len(got) != len(want) || !bytes.Equal(again.Bytes(), buf.Bytes()) || !reflect.DeepEqual(got[5].Program.Insns, want[5].Program.Insns) ||
		got[3].Kernel.Err == nil || got[3].Kernel.Err.Error() != "refused" || got[4].Kernel.Err != nil {
		t.Errorf("read back %d programs, differing from the %d written", len(got), len(want))
	}
	for _, bad := range []string{"{", `{"program":null}`, `{"program":{"Seed":1},"r0_bits":32,"value":""}`} {
		if _, err := ReadCorpus(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
