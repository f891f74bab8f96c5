package asm

import (
	"errors"
	"fmt"
	"strings"
)

// maxErrors bounds how many line errors one Assemble call reports.
const maxErrors = 10

// Assemble translates a program in the conformance-suite dialect into
// instruction slots. See the package documentation for the syntax. On error
// it reports every bad line (up to ten) as *LineError values joined with
// errors.Join.
func Assemble(src string) ([]Instruction, error) {
	a := assembler{labels: map[string]labelDef{}, firstExit: -1}
	for i, line := range strings.Split(src, "\n") {
		if err := a.line(i+1, line); err != nil {
			a.fail(i+1, err)
		}
		if len(a.errs) >= maxErrors {
			return nil, errors.Join(a.errs...)
		}
	}
	a.resolve()
	if len(a.errs) > 0 {
		return nil, errors.Join(a.errs...)
	}
	return a.insns, nil
}

// MustAssemble is Assemble for programs written into tests and examples: it
// panics on error.
func MustAssemble(src string) []Instruction {
	insns, err := Assemble(src)
	if err != nil {
		panic(fmt.Sprintf("asm.MustAssemble: %v", err))
	}
	return insns
}

type labelDef struct{ slot, line int }

// fixup is a jump or local call whose label is resolved after the last line.
type fixup struct {
	slot, line int
	label      string
	wide       bool // the target goes in Imm (ja32, call local), not Offset
}

type assembler struct {
	insns     []Instruction
	labels    map[string]labelDef
	fixups    []fixup
	firstExit int // slot of the first exit, the target of label "exit" by default
	errs      []error
}

func (a *assembler) fail(line int, err error) {
	a.errs = append(a.errs, &LineError{Line: line, Err: err})
}

func (a *assembler) line(n int, text string) error {
	if i := strings.IndexByte(text, '#'); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	if i := strings.IndexByte(text, ':'); i >= 0 {
		if err := a.defineLabel(strings.TrimSpace(text[:i]), n); err != nil {
			return err
		}
		if text = strings.TrimSpace(text[i+1:]); text == "" {
			return nil
		}
	}
	name, rest := splitMnemonic(text)
	operands, err := splitOperands(rest)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if name == ".raw" {
		return a.raw(operands)
	}
	candidates := formsByName[name]
	if len(candidates) == 0 {
		return fmt.Errorf("unknown mnemonic %q", name)
	}
	f, err := pickForm(name, candidates, operands)
	if err != nil {
		return err
	}
	slots, target, err := encode(f, operands)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if target != "" {
		a.fixups = append(a.fixups, fixup{slot: len(a.insns), line: n, label: target, wide: f.operands[len(f.operands)-1] == opJump32})
	}
	if f.opcode == OpExit && a.firstExit < 0 {
		a.firstExit = len(a.insns)
	}
	a.insns = append(a.insns, slots...)
	return nil
}

func (a *assembler) defineLabel(name string, line int) error {
	if !isLabel(name) {
		return fmt.Errorf("bad label name %q (want a letter or _, then letters, digits, _ or .)", name)
	}
	if prev, ok := a.labels[name]; ok {
		return fmt.Errorf("label %q already defined at line %d", name, prev.line)
	}
	a.labels[name] = labelDef{slot: len(a.insns), line: line}
	return nil
}

// raw handles ".raw N": one slot given as the suite's 64-bit number.
func (a *assembler) raw(operands []string) error {
	if len(operands) != 1 {
		return fmt.Errorf(".raw takes one 64-bit value, got %d operands", len(operands))
	}
	neg, v, err := parseNumber(operands[0])
	if err != nil {
		return fmt.Errorf(".raw: %w", err)
	}
	if neg {
		return fmt.Errorf(".raw: %s is negative", operands[0])
	}
	a.insns = append(a.insns, fromRaw(v))
	return nil
}

func (a *assembler) resolve() {
	for _, fx := range a.fixups {
		target, ok := a.labels[fx.label]
		if !ok && fx.label == "exit" && a.firstExit >= 0 {
			target, ok = labelDef{slot: a.firstExit}, true
		}
		if !ok {
			a.fail(fx.line, fmt.Errorf("undefined label %q", fx.label))
			continue
		}
		delta := int64(target.slot) - int64(fx.slot) - 1
		if fx.wide {
			if delta < -1<<31 || delta >= 1<<31 {
				a.fail(fx.line, fmt.Errorf("label %q is %d slots away, too far for a 32-bit offset", fx.label, delta))
				continue
			}
			a.insns[fx.slot].Imm = int32(delta)
			continue
		}
		if delta < -1<<15 || delta >= 1<<15 {
			a.fail(fx.line, fmt.Errorf("label %q is %d slots away, too far for a 16-bit jump offset (use ja32)", fx.label, delta))
			continue
		}
		a.insns[fx.slot].Offset = int16(delta)
	}
}

// splitMnemonic separates the mnemonic from the operand text. The
// mnemonics of atomics ("lock fetch add32") and of calls other than helper
// calls ("call local") are several words long.
func splitMnemonic(text string) (name, rest string) {
	name, rest = nextWord(text)
	switch name {
	case "lock":
		op, r := nextWord(rest)
		if op == "fetch" {
			var op2 string
			op2, r = nextWord(r)
			op += " " + op2
		}
		return strings.TrimSpace(name + " " + op), r
	case "call":
		if kind, r := nextWord(rest); kind == "local" || kind == "helper" || kind == "runtime" {
			return name + " " + kind, r
		}
	}
	return name, rest
}

func nextWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func splitOperands(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
		if parts[i] == "" {
			return nil, fmt.Errorf("empty operand %d in %q", i+1, strings.TrimSpace(s))
		}
	}
	return parts, nil
}

// pickForm chooses among the forms of a mnemonic by the shape of the
// operands: a register starts with %, memory with [, and so on.
func pickForm(name string, candidates []*form, operands []string) (*form, error) {
	for _, f := range candidates {
		if len(f.operands) != len(operands) {
			continue
		}
		fits := true
		for i, o := range f.operands {
			fits = fits && operandFits(f, o, operands[i])
		}
		if fits {
			return f, nil
		}
	}
	// With the right operand count, the first such form's own parsing
	// names the bad operand ("r1" is not a register) better than a usage.
	for _, f := range candidates {
		if len(f.operands) == len(operands) {
			if _, _, err := encode(f, operands); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	usages := make([]string, len(candidates))
	for i, f := range candidates {
		usages[i] = f.usage()
	}
	return nil, fmt.Errorf("bad operands for %s: want %s", name, strings.Join(usages, " or "))
}

func operandFits(f *form, o operand, s string) bool {
	switch o {
	case opDst, opSrc:
		return strings.HasPrefix(s, "%")
	case opDstMem, opSrcMem:
		return strings.HasPrefix(s, "[")
	case opPseudo:
		return strings.HasPrefix(s, pseudoName(f.src)+"(")
	default: // immediates, jump targets
		return !strings.HasPrefix(s, "%") && !strings.HasPrefix(s, "[") && !strings.Contains(s, "(")
	}
}

// encode builds the slots of one instruction. A jump or call to a label
// returns the label, for the caller to resolve once all labels are known.
func encode(f *form, operands []string) (slots []Instruction, label string, err error) {
	ins := Instruction{Opcode: f.opcode, Src: f.src, Offset: f.off, Imm: f.imm}
	var second *Instruction
	if f.opcode == OpLDDW {
		second = &Instruction{}
	}
	for i, o := range f.operands {
		s := operands[i]
		switch o {
		case opDst:
			ins.Dst, err = parseRegister(s)
		case opSrc:
			ins.Src, err = parseRegister(s)
		case opImm:
			ins.Imm, err = parseImm32(s)
		case opImm64:
			if strings.Contains(s, "(") {
				return nil, "", fmt.Errorf("%q: unknown lddw source kind (want %s)", s, pseudoKindList())
			}
			var v uint64
			v, err = parseImm64(s)
			ins.Imm, second.Imm = int32(uint32(v)), int32(uint32(v>>32))
		case opPseudo:
			ins.Imm, second.Imm, err = parsePseudo(s, pseudoName(f.src))
		case opDstMem:
			ins.Dst, ins.Offset, err = parseMemory(s)
		case opSrcMem:
			ins.Src, ins.Offset, err = parseMemory(s)
		case opJump, opJump32:
			if !isNumeric(s) {
				if !isLabel(s) {
					return nil, "", fmt.Errorf("jump target %q is neither a label nor an offset like +3", s)
				}
				label = s
				continue
			}
			var v int64
			if o == opJump {
				v, err = parseSigned(s, 16)
				ins.Offset = int16(v)
			} else {
				v, err = parseSigned(s, 32)
				ins.Imm = int32(v)
			}
		}
		if err != nil {
			return nil, "", err
		}
	}
	if second != nil {
		return []Instruction{ins, *second}, label, nil
	}
	return []Instruction{ins}, label, nil
}
