package kerneldiff

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/uebpf/uebpf/asm"
)

// Mismatch is engines disagreeing on a program.
type Mismatch struct {
	Program  *Program
	Outcomes []Outcome
	// Diffs are the differences, one line each.
	Diffs []string
}

// Error reports the seed, every difference with each engine's value, and
// the program.
func (m *Mismatch) Error() string {
	var b strings.Builder
	engines := make([]string, len(m.Outcomes))
	for i, o := range m.Outcomes {
		engines[i] = o.Engine
	}
	fmt.Fprintf(&b, "seed %d: engines disagree (%s):\n", m.Program.Seed, strings.Join(engines, ", "))
	for _, d := range m.Diffs {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	b.WriteString("program:\n")
	b.WriteString(Listing(m.Program.Insns))
	return b.String()
}

// Listing returns the program's text with slot numbers, one instruction
// per line, jump offsets relative as in the bytecode.
func Listing(insns []asm.Instruction) string {
	var b strings.Builder
	for i := 0; i < len(insns); i++ {
		fmt.Fprintf(&b, "%5d: %s\n", i, asm.Format(insns, i))
		if insns[i].IsLDDW() {
			i++
		}
	}
	return b.String()
}

// Compare returns nil if every outcome agrees, else a *Mismatch. Return
// values are compared on all 64 bits between 64-bit outcomes and on the
// low 32 bits against the kernel's; the element word by word.
func Compare(p *Program, outs []Outcome) *Mismatch {
	var diffs []string
	for _, o := range outs {
		if o.Err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: error: %v", o.Engine, o.Err))
		}
	}
	if !r0Agree(outs) {
		diffs = append(diffs, "return value: "+values(outs, func(o Outcome) string {
			return fmt.Sprintf("0x%0*x", o.R0Bits/4, o.R0)
		}))
	}
	for off := 0; off+8 <= ValueSize; off += 8 {
		word := func(o Outcome) uint64 { return binary.LittleEndian.Uint64(o.Value[off:]) }
		same := true
		for _, o := range outs[1:] {
			same = same && word(o) == word(outs[0])
		}
		if !same {
			diffs = append(diffs, fmt.Sprintf("%s (element+%d): %s", WordName(off), off,
				values(outs, func(o Outcome) string { return fmt.Sprintf("0x%016x", word(o)) })))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return &Mismatch{Program: p, Outcomes: outs, Diffs: diffs}
}

func r0Agree(outs []Outcome) bool {
	for i := range outs {
		for j := range i {
			a, b := outs[i], outs[j]
			if a.R0Bits < 64 || b.R0Bits < 64 {
				a.R0, b.R0 = uint64(uint32(a.R0)), uint64(uint32(b.R0))
			}
			if a.R0 != b.R0 {
				return false
			}
		}
	}
	return true
}

func values(outs []Outcome, f func(Outcome) string) string {
	parts := make([]string, len(outs))
	for i, o := range outs {
		parts[i] = o.Engine + " " + f(o)
	}
	return strings.Join(parts, ", ")
}
