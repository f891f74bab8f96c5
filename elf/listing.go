package elf

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/asm"
)

// Listing is a program of an object as clang wrote it, for disassemblers
// (uebpf disasm): nothing is loaded, no map is created and CO-RE
// relocations are not applied. Calls, jumps and function pointers are
// resolved to offsets as NewCollection resolves them; map and global-data
// references keep index 0 and are named in References; references that
// cannot be resolved (kfuncs, externs) are left as clang wrote them and
// named too.
type Listing struct {
	// Name and Section are the program's function name and ELF section.
	Name, Section string
	// Instructions are the program's slots, with the functions it calls
	// appended.
	Instructions []asm.Instruction
	// Symbols names the function that starts at a slot ("" elsewhere).
	Symbols []string
	// References names the map, data section or symbol a slot refers to
	// ("" elsewhere).
	References []string

	lines []fmt.Stringer
}

// NewListing decodes the program ps for display.
func NewListing(ps *ebpf.ProgramSpec) (*Listing, error) {
	if ps.ByteOrder != nil && ps.ByteOrder != binary.LittleEndian {
		return nil, fmt.Errorf("program %s: %w", ps.Name, ErrByteOrder)
	}
	insns := ps.Instructions
	symbols := make(map[string]int64)
	var raw int64
	for i := range insns {
		if sym := insns[i].Symbol(); sym != "" {
			symbols[sym] = raw
		}
		raw += int64(insns[i].Width())
	}
	l := &Listing{Name: ps.Name, Section: ps.SectionName, lines: sourceLines(insns)}
	l.Symbols = make([]string, raw)
	l.References = make([]string, raw)
	var buf bytes.Buffer
	raw = 0
	for i := range insns {
		ins := insns[i] // a copy: fixing it up leaves the spec alone
		l.Symbols[raw] = ins.Symbol()
		if ref := ins.Reference(); ref != "" && (ins.IsLoadFromMap() || ins.IsKfuncCall() || !ins.IsFunctionReference() && !ins.OpCode.Class().IsJump()) {
			l.References[raw] = ref
		}
		if err := resolve(&ins, raw, symbols, func(string) (int, error) { return 0, nil }); err != nil {
			// Shown as written, named by l.References.
			l.References[raw] = ins.Reference()
		}
		if _, err := ins.Marshal(&buf, binary.LittleEndian); err != nil {
			return nil, fmt.Errorf("program %s: instruction %d: %w", ps.Name, raw, err)
		}
		raw += int64(ins.Width())
	}
	code, err := asm.Decode(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("program %s: %w", ps.Name, err)
	}
	l.Instructions = code
	return l, nil
}

// SourceLine returns the source line of slot pc from BTF line info, as
// Program.SourceLine does: "file.c:12: text", or "".
func (l *Listing) SourceLine(pc int) string { return (&Program{lines: l.lines}).SourceLine(pc) }
