package jit_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// disassemble decodes code from body to the first ud2 (the end of the
// body) and returns its listing, with addresses (jump targets included)
// relative to the body; any byte sequence the decoder rejects is
// an error.
func disassemble(code []byte, body int) (string, error) {
	return disassembleTo(code, body, true)
}

// disassembleTo is disassemble, going on past the body to the end of the
// code (its copies of loops and stubs) when not toUD2.
func disassembleTo(code []byte, body int, toUD2 bool) (string, error) {
	var s strings.Builder
	for pc := body; pc < len(code); {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			return s.String(), fmt.Errorf("offset %#x: %w", pc, err)
		}
		fmt.Fprintf(&s, "%6x  %s\n", pc-body, x86asm.IntelSyntax(inst, uint64(pc-body), nil))
		if inst.Op == x86asm.UD2 && toUD2 {
			break
		}
		pc += inst.Len
	}
	return s.String(), nil
}

// The body of every program of the benchmark set's objects decodes; with
// UEBPF_JIT_DUMP=1 the listings are written to the test log (go test -v
// -run TestBodyDecodes), with UEBPF_JIT_DUMP=all the code after the body
// too (as far as it decodes: jump tables do not).
func TestBodyDecodes(t *testing.T) {
	setPrograms(t, func(name string, vp *vm.Program) {
		for _, opts := range []jit.Options{{}, {Unchecked: true}} {
			p := compile(t, vp, opts)
			code, body := jit.Code(p)
			listing, err := disassemble(code, body)
			if err != nil {
				t.Errorf("%s (unchecked %v): %v", name, opts.Unchecked, err)
			}
			if os.Getenv("UEBPF_JIT_DUMP") == "all" {
				listing, _ = disassembleTo(code, body, false)
			}
			if os.Getenv("UEBPF_JIT_DUMP") != "" {
				t.Logf("%s (unchecked %v), %d bytes:\n%s", name, opts.Unchecked, len(code), listing)
			}
		}
	})
}

// hasJumpTable reports whether p's code has a switch dispatch (an
// indirect jump through r11).
func hasJumpTable(t *testing.T, p *jit.Program) bool {
	t.Helper()
	code, body := jit.Code(p)
	listing, err := disassemble(code, body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(listing, "jmp r11")
}

// hasSetcc reports whether the program of src compiles to a setcc.
func hasSetcc(t *testing.T, src string) bool {
	t.Helper()
	p := compile(t, loadVM(t, src, nil), jit.Options{Unchecked: true})
	code, body := jit.Code(p)
	listing, err := disassemble(code, body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(listing, "  set")
}

// countInsns returns the number of machine instructions in code.
func countInsns(code []byte) (int, error) {
	n := 0
	for pc := 0; pc < len(code); n++ {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			return n, fmt.Errorf("offset %#x: %w", pc, err)
		}
		pc += inst.Len
	}
	return n, nil
}
