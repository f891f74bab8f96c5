package asm

import (
	"strconv"
	"strings"
)

// operand is the kind of one operand in the text of an instruction. It also
// says which instruction field the operand fills.
type operand uint8

const (
	opDst    operand = iota // %rN in Dst
	opSrc                   // %rN in Src
	opImm                   // 32-bit immediate in Imm
	opImm64                 // 64-bit constant in Imm of both lddw slots
	opPseudo                // lddw pseudo source: KIND(imm) or KIND(imm)+next
	opDstMem                // [%rN+off]: Dst and Offset
	opSrcMem                // [%rN+off]: Src and Offset
	opJump                  // label or +N/-N in Offset
	opJump32                // label or +N/-N in Imm (ja32, call local)
)

// field flags say which instruction fields a form's operands set; all other
// fields must hold the form's fixed values.
const (
	fieldDst = 1 << iota
	fieldSrc
	fieldOff
	fieldImm
)

func (o operand) fields() int {
	switch o {
	case opDst:
		return fieldDst
	case opSrc:
		return fieldSrc
	case opImm, opImm64, opPseudo, opJump32:
		return fieldImm
	case opDstMem:
		return fieldDst | fieldOff
	case opSrcMem:
		return fieldSrc | fieldOff
	case opJump:
		return fieldOff
	}
	return 0
}

// usage is how the operand is shown in error messages.
func (o operand) usage() string {
	switch o {
	case opDst:
		return "%dst"
	case opSrc:
		return "%src"
	case opImm:
		return "imm32"
	case opImm64:
		return "imm64"
	case opPseudo:
		return "kind(imm)[+next]"
	case opDstMem:
		return "[%dst+off]"
	case opSrcMem:
		return "[%src+off]"
	case opJump, opJump32:
		return "label|+N|-N"
	}
	return "?"
}

// form is one way of writing an instruction: a mnemonic, its operands, and
// the values of every field the operands do not set.
type form struct {
	name     string // "add32", "lock fetch add", "call local"
	opcode   uint8
	operands []operand
	src      uint8 // fixed Src (call kinds, lddw pseudo kinds)
	off      int16 // fixed Offset (sdiv/smod 1, movsx 8/16/32)
	imm      int32 // fixed Imm (endianness width, atomic operation)
	alias    bool  // accepted by Assemble, never produced by Disassemble
}

// fields returns the set of fields the operands of f set.
func (f *form) fields() int {
	mask := 0
	for _, o := range f.operands {
		mask |= o.fields()
	}
	return mask
}

func (f *form) usage() string {
	parts := make([]string, len(f.operands))
	for i, o := range f.operands {
		parts[i] = o.usage()
	}
	if len(parts) == 0 {
		return f.name
	}
	return f.name + " " + strings.Join(parts, ", ")
}

// pseudoKinds names the src values of lddw (RFC 9669 section 4.4).
var pseudoKinds = []struct {
	src  uint8
	name string
}{
	{1, "map_by_fd"},
	{2, "map_val_by_fd"},
	{3, "var_addr"},
	{4, "code_addr"},
	{5, "map_by_idx"},
	{6, "map_val_by_idx"},
}

func pseudoName(src uint8) string {
	for _, k := range pseudoKinds {
		if k.src == src {
			return k.name
		}
	}
	return ""
}

func pseudoKindList() string {
	names := make([]string, len(pseudoKinds))
	for i, k := range pseudoKinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

var (
	formsByName   = map[string][]*form{}
	formsByOpcode = map[uint8][]*form{}
)

func addForm(f form) {
	p := &f
	formsByName[f.name] = append(formsByName[f.name], p)
	if !f.alias {
		formsByOpcode[f.opcode] = append(formsByOpcode[f.opcode], p)
	}
}

func init() {
	addALUForms()
	addJumpForms()
	addMemoryForms()
}

// aluClasses pairs the 64-bit ALU class and its 32-bit sibling with their mnemonic suffixes.
var aluClasses = []struct {
	class  uint8
	suffix string
}{{ClassALU64, ""}, {ClassALU, "32"}}

func addALUForms() {
	binary := []struct {
		name string
		op   uint8
		off  int16
	}{
		{"add", AluADD, 0}, {"sub", AluSUB, 0}, {"mul", AluMUL, 0},
		{"div", AluDIV, 0}, {"sdiv", AluDIV, 1},
		{"or", AluOR, 0}, {"and", AluAND, 0}, {"lsh", AluLSH, 0}, {"rsh", AluRSH, 0},
		{"mod", AluMOD, 0}, {"smod", AluMOD, 1},
		{"xor", AluXOR, 0}, {"mov", AluMOV, 0}, {"arsh", AluARSH, 0},
	}
	for _, c := range aluClasses {
		for _, b := range binary {
			name := b.name + c.suffix
			addForm(form{name: name, opcode: c.class | b.op | SourceK, operands: []operand{opDst, opImm}, off: b.off})
			addForm(form{name: name, opcode: c.class | b.op | SourceX, operands: []operand{opDst, opSrc}, off: b.off})
		}
		addForm(form{name: "neg" + c.suffix, opcode: c.class | AluNEG, operands: []operand{opDst}})
	}
	// movsx<from><to>: sign-extend the low <from> bits, into a 32- or 64-bit result.
	for _, mx := range []struct {
		class uint8
		from  int16
		to    string
	}{
		{ClassALU, 8, "32"}, {ClassALU, 16, "32"},
		{ClassALU64, 8, "64"}, {ClassALU64, 16, "64"}, {ClassALU64, 32, "64"},
	} {
		name := "movsx" + strconv.Itoa(int(mx.from)) + mx.to
		addForm(form{name: name, opcode: mx.class | AluMOV | SourceX, operands: []operand{opDst, opSrc}, off: mx.from})
	}
	for _, width := range []int32{16, 32, 64} {
		w := strconv.Itoa(int(width))
		addForm(form{name: "le" + w, opcode: ClassALU | AluEND | SourceK, operands: []operand{opDst}, imm: width})
		addForm(form{name: "be" + w, opcode: ClassALU | AluEND | SourceX, operands: []operand{opDst}, imm: width})
		addForm(form{name: "bswap" + w, opcode: ClassALU64 | AluEND, operands: []operand{opDst}, imm: width})
		// Older conformance files spell the unconditional swap "swapN".
		addForm(form{name: "swap" + w, opcode: ClassALU64 | AluEND, operands: []operand{opDst}, imm: width, alias: true})
	}
}

func addJumpForms() {
	conditional := []struct {
		name string
		op   uint8
	}{
		{"jeq", JmpJEQ}, {"jgt", JmpJGT}, {"jge", JmpJGE}, {"jset", JmpJSET},
		{"jne", JmpJNE}, {"jsgt", JmpJSGT}, {"jsge", JmpJSGE},
		{"jlt", JmpJLT}, {"jle", JmpJLE}, {"jslt", JmpJSLT}, {"jsle", JmpJSLE},
	}
	for _, c := range []struct {
		class  uint8
		suffix string
	}{{ClassJMP, ""}, {ClassJMP32, "32"}} {
		for _, j := range conditional {
			name := j.name + c.suffix
			addForm(form{name: name, opcode: c.class | j.op | SourceK, operands: []operand{opDst, opImm, opJump}})
			addForm(form{name: name, opcode: c.class | j.op | SourceX, operands: []operand{opDst, opSrc, opJump}})
		}
	}
	addForm(form{name: "ja", opcode: ClassJMP | JmpJA, operands: []operand{opJump}})
	// gotol: the JMP32 class of ja takes its target from the 32-bit immediate.
	addForm(form{name: "ja32", opcode: ClassJMP32 | JmpJA, operands: []operand{opJump32}})
	addForm(form{name: "call", opcode: OpCall, operands: []operand{opImm}})
	addForm(form{name: "call helper", opcode: OpCall, operands: []operand{opImm}, alias: true})
	addForm(form{name: "call local", opcode: OpCall, operands: []operand{opJump32}, src: PseudoCall})
	addForm(form{name: "call runtime", opcode: OpCall, operands: []operand{opImm}, src: PseudoKfuncCall})
	// callx keeps its target register in dst, as clang and the suite do.
	addForm(form{name: "call", opcode: OpCallX, operands: []operand{opDst}})
	addForm(form{name: "exit", opcode: OpExit})
}

// sizes of load and store opcodes, by mnemonic suffix.
var sizes = []struct {
	suffix string
	size   uint8
}{{"w", SizeW}, {"h", SizeH}, {"b", SizeB}, {"dw", SizeDW}}

func addMemoryForms() {
	addForm(form{name: "lddw", opcode: OpLDDW, operands: []operand{opDst, opImm64}})
	for _, k := range pseudoKinds {
		addForm(form{name: "lddw", opcode: OpLDDW, operands: []operand{opDst, opPseudo}, src: k.src})
	}
	for _, s := range sizes {
		addForm(form{name: "ldx" + s.suffix, opcode: ClassLDX | ModeMEM | s.size, operands: []operand{opDst, opSrcMem}})
		addForm(form{name: "st" + s.suffix, opcode: ClassST | ModeMEM | s.size, operands: []operand{opDstMem, opImm}})
		addForm(form{name: "stx" + s.suffix, opcode: ClassSTX | ModeMEM | s.size, operands: []operand{opDstMem, opSrc}})
		if s.size == SizeDW {
			continue // no 64-bit sign extension and no 64-bit legacy packet loads
		}
		addForm(form{name: "ldxs" + s.suffix, opcode: ClassLDX | ModeMEMSX | s.size, operands: []operand{opDst, opSrcMem}})
		addForm(form{name: "ldabs" + s.suffix, opcode: ClassLD | ModeABS | s.size, operands: []operand{opImm}})
		addForm(form{name: "ldind" + s.suffix, opcode: ClassLD | ModeIND | s.size, operands: []operand{opSrc, opImm}})
	}
	atomics := []struct {
		name string
		imm  int32
	}{
		{"add", AtomicADD}, {"or", AtomicOR}, {"and", AtomicAND}, {"xor", AtomicXOR},
	}
	for _, c := range []struct {
		size   uint8
		suffix string
	}{{SizeDW, ""}, {SizeW, "32"}} {
		opcode := ClassSTX | ModeATOMIC | c.size
		ops := []operand{opDstMem, opSrc}
		for _, a := range atomics {
			addForm(form{name: "lock " + a.name + c.suffix, opcode: opcode, operands: ops, imm: a.imm})
			addForm(form{name: "lock fetch " + a.name + c.suffix, opcode: opcode, operands: ops, imm: a.imm | AtomicFetch})
		}
		// xchg and cmpxchg always fetch; "fetch" is accepted but not needed.
		for _, a := range []struct {
			name string
			imm  int32
		}{{"xchg", AtomicXCHG}, {"cmpxchg", AtomicCMPXCHG}} {
			addForm(form{name: "lock " + a.name + c.suffix, opcode: opcode, operands: ops, imm: a.imm})
			addForm(form{name: "lock fetch " + a.name + c.suffix, opcode: opcode, operands: ops, imm: a.imm, alias: true})
		}
	}
}
