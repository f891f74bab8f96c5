package asm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Disassemble returns the text of a program, one instruction per line (an
// lddw is one line for two slots). Jump and call targets become labels
// "L<slot>:" where the target starts an instruction, and +N/-N offsets
// otherwise.
//
// A slot that is not a valid instruction (unknown opcode, a register above
// %r10, a reserved field that is not zero, a broken lddw pair) is written as
// a ".raw" directive with the reason in a comment, and reported in the error
// as a *SlotError. Either way the text assembles back to exactly the same
// slots.
func Disassemble(insns []Instruction) (string, error) {
	lines := make([]decoded, 0, len(insns))
	starts := make([]bool, len(insns)+1)
	starts[len(insns)] = true // a label may follow the last instruction
	var errs []error
	for i := 0; i < len(insns); {
		d := decodeAt(insns, i)
		if d.f == nil {
			errs = append(errs, &SlotError{Slot: i, Ins: insns[i], Reason: d.reason})
		}
		starts[i] = true
		lines = append(lines, d)
		i += d.width
	}

	labels := make([]bool, len(insns)+1)
	target := func(slot int, delta int64) string {
		t := int64(slot) + 1 + delta
		if t < 0 || t > int64(len(insns)) || !starts[t] {
			return formatDelta(delta)
		}
		labels[t] = true
		return "L" + strconv.FormatInt(t, 10)
	}
	texts := make([]string, len(lines))
	for i, d := range lines {
		texts[i] = render(insns, d, target)
	}

	var b strings.Builder
	for i, d := range lines {
		if labels[d.slot] {
			fmt.Fprintf(&b, "L%d:\n", d.slot)
		}
		b.WriteString(texts[i])
		b.WriteByte('\n')
	}
	if labels[len(insns)] {
		fmt.Fprintf(&b, "L%d:\n", len(insns))
	}
	return b.String(), errors.Join(errs...)
}

// Format returns the text of the instruction at slot i, with jump targets
// as +N/-N offsets. A slot that is not a valid instruction formats as a
// ".raw" directive with the reason in a comment. Format never panics; an
// index outside the program gives an ".error" line.
func Format(insns []Instruction, i int) string {
	if i < 0 || i >= len(insns) {
		return fmt.Sprintf(".error slot %d is outside the program (%d slots)", i, len(insns))
	}
	d := decodeAt(insns, i)
	if d.f == nil && i > 0 && insns[i-1].IsLDDW() && insns[i].Opcode == 0 {
		d.reason = fmt.Sprintf("second slot of the lddw at slot %d", i-1)
	}
	return render(insns, d, func(_ int, delta int64) string { return formatDelta(delta) })
}

// decoded is one line of disassembly: an instruction form, or a raw slot.
type decoded struct {
	slot   int
	f      *form // nil: show the slot as .raw
	width  int   // slots: 2 for lddw, else 1
	reason string
}

func decodeAt(insns []Instruction, i int) decoded {
	ins := insns[i]
	raw := func(reason string) decoded { return decoded{slot: i, width: 1, reason: reason} }
	if ins.Dst > 0x0f || ins.Src > 0x0f {
		return raw(fmt.Sprintf("register fields %d and %d do not fit in 4 bits", ins.Dst, ins.Src))
	}
	f, reason := matchForm(ins)
	if f == nil {
		return raw(reason)
	}
	if f.opcode != OpLDDW {
		return decoded{slot: i, f: f, width: 1}
	}
	if i+1 >= len(insns) {
		return raw("lddw without its second slot")
	}
	if next := insns[i+1]; next.Opcode != 0 || next.Dst != 0 || next.Src != 0 || next.Offset != 0 {
		return raw(fmt.Sprintf("lddw followed by slot 0x%016x, not a second half (opcode, registers and offset must be 0)", rawValue(next)))
	}
	return decoded{slot: i, f: f, width: 2}
}

// matchForm finds the form that writes ins exactly, or says why none does.
func matchForm(ins Instruction) (*form, string) {
	candidates := formsByOpcode[ins.Opcode]
	if len(candidates) == 0 {
		return nil, fmt.Sprintf("unknown opcode 0x%02x", ins.Opcode)
	}
	var problems []fieldProblem
	for _, f := range candidates {
		p := checkFields(f, ins)
		if p == nil {
			return f, ""
		}
		problems = append(problems, *p)
	}
	return nil, explain(ins.Opcode, problems)
}

// fieldProblem is the first field of an instruction that a form cannot write.
type fieldProblem struct {
	field string
	got   int64
	want  int64 // for fixed fields
	reg   bool  // a register operand above %r10, not a fixed field
}

func checkFields(f *form, ins Instruction) *fieldProblem {
	free := f.fields()
	checkReg := func(name string, bit int, got, fixed uint8) *fieldProblem {
		if free&bit != 0 {
			if got > R10 {
				return &fieldProblem{field: name, got: int64(got), reg: true}
			}
			return nil
		}
		if got != fixed {
			return &fieldProblem{field: name, got: int64(got), want: int64(fixed)}
		}
		return nil
	}
	if p := checkReg("dst", fieldDst, ins.Dst, 0); p != nil {
		return p
	}
	if p := checkReg("src", fieldSrc, ins.Src, f.src); p != nil {
		return p
	}
	if free&fieldOff == 0 && ins.Offset != f.off {
		return &fieldProblem{field: "offset", got: int64(ins.Offset), want: int64(f.off)}
	}
	if free&fieldImm == 0 && ins.Imm != f.imm {
		return &fieldProblem{field: "imm", got: int64(ins.Imm), want: int64(f.imm)}
	}
	return nil
}

// explain turns the problems of every candidate form into one reason. When
// all candidates reject the same fixed field, it lists the values allowed.
func explain(opcode uint8, problems []fieldProblem) string {
	first := problems[0]
	if first.reg {
		return fmt.Sprintf("opcode 0x%02x: %s register r%d does not exist", opcode, first.field, first.got)
	}
	wants := []string{strconv.FormatInt(first.want, 10)}
	for _, p := range problems[1:] {
		if p.field != first.field || p.reg {
			return fmt.Sprintf("opcode 0x%02x: %s is %d, must be %d", opcode, first.field, first.got, first.want)
		}
		wants = append(wants, strconv.FormatInt(p.want, 10))
	}
	return fmt.Sprintf("opcode 0x%02x: %s is %d, must be %s", opcode, first.field, first.got, strings.Join(wants, " or "))
}

// render writes one line; target formats a jump relative to the slot after it.
func render(insns []Instruction, d decoded, target func(slot int, delta int64) string) string {
	ins := insns[d.slot]
	if d.f == nil {
		return fmt.Sprintf(".raw 0x%016x # %s", rawValue(ins), d.reason)
	}
	parts := make([]string, len(d.f.operands))
	for i, o := range d.f.operands {
		switch o {
		case opDst:
			parts[i] = formatRegister(ins.Dst)
		case opSrc:
			parts[i] = formatRegister(ins.Src)
		case opImm:
			parts[i] = formatImm(ins.Imm)
		case opImm64:
			hi := insns[d.slot+1].Imm
			parts[i] = formatImm64(uint64(uint32(ins.Imm)) | uint64(uint32(hi))<<32)
		case opPseudo:
			parts[i] = pseudoName(d.f.src) + "(" + formatImm(ins.Imm) + ")"
			if next := insns[d.slot+1].Imm; next != 0 {
				parts[i] += formatDelta(int64(next))
			}
		case opDstMem:
			parts[i] = formatMemory(ins.Dst, ins.Offset)
		case opSrcMem:
			parts[i] = formatMemory(ins.Src, ins.Offset)
		case opJump:
			parts[i] = target(d.slot, int64(ins.Offset))
		case opJump32:
			parts[i] = target(d.slot, int64(ins.Imm))
		}
	}
	if len(parts) == 0 {
		return d.f.name
	}
	return d.f.name + " " + strings.Join(parts, ", ")
}
