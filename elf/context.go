package elf

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// contextSize returns the size of the type the program's first parameter
// points to, from the object's BTF: what the verifier needs to know about
// the context when the caller does not say. It is 0 when the object has no
// BTF for the function, the parameter is void * or absent, or the type has
// no fixed size.
func contextSize(insns asm.Instructions) int {
	if len(insns) == 0 {
		return 0
	}
	fn := btf.FuncMetadata(&insns[0])
	if fn == nil {
		return 0
	}
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok || len(proto.Params) == 0 {
		return 0
	}
	ptr, ok := btf.UnderlyingType(proto.Params[0].Type).(*btf.Pointer)
	if !ok {
		return 0
	}
	if _, void := btf.UnderlyingType(ptr.Target).(*btf.Void); void {
		return 0
	}
	n, err := btf.Sizeof(ptr.Target)
	if err != nil {
		return 0
	}
	return n
}

// sourceLines returns the BTF line info of every instruction slot (an
// lddw takes two); a slot with no line info of its own inherits the
// previous one, as in the kernel's log. nil when the object has none.
// Lines are formatted only when asked for (Program.SourceLine): loading
// must not pay for error messages.
func sourceLines(insns asm.Instructions) []fmt.Stringer {
	var lines []fmt.Stringer
	var current fmt.Stringer
	for _, ins := range insns {
		if src := ins.Source(); src != nil {
			current = src
		}
		for range ins.Size() / asm.InstructionSize {
			lines = append(lines, current)
		}
	}
	if current == nil {
		return nil
	}
	return lines
}

// SourceLine returns the source line of instruction slot pc, from BTF
// line info: "file.c:12: text", or "" when the object has none.
func (p *Program) SourceLine(pc int) string {
	if pc < 0 || pc >= len(p.lines) || p.lines[pc] == nil {
		return ""
	}
	src := p.lines[pc]
	line, ok := src.(*btf.Line)
	if !ok {
		return strings.TrimSpace(src.String())
	}
	return fmt.Sprintf("%s:%d: %s", filepath.Base(line.FileName()), line.LineNumber(), strings.TrimSpace(line.Line()))
}
