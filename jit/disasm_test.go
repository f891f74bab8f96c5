package jit_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/benchset"
	"github.com/uebpf/uebpf/jit"
)

// disassemble decodes code from body to the first ud2 (the end of the
// body) and returns its listing; any byte sequence the decoder rejects is
// an error.
func disassemble(code []byte, body int) (string, error) {
	var s strings.Builder
	for pc := body; pc < len(code); {
		inst, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			return s.String(), fmt.Errorf("offset %#x: %w", pc, err)
		}
		fmt.Fprintf(&s, "%6x  %s\n", pc-body, x86asm.IntelSyntax(inst, uint64(pc), nil))
		if inst.Op == x86asm.UD2 {
			break
		}
		pc += inst.Len
	}
	return s.String(), nil
}

// The body of every benchmark-set program decodes; with UEBPF_JIT_DUMP=1
// the listings are written to the test log (go test -v -run TestBodyDecodes).
func TestBodyDecodes(t *testing.T) {
	for _, bm := range benchset.Set {
		for _, opts := range []jit.Options{{}, {Unchecked: true}} {
			obj, err := benchset.Object(bm.Object)
			if err != nil {
				t.Fatal(err)
			}
			coll, err := elf.LoadReader(bytes.NewReader(obj), &elf.Options{Helpers: helpers.Standard(nil)})
			if err != nil {
				t.Fatal(err)
			}
			p := compile(t, coll.Program(bm.Program).VM, opts)
			code, body := jit.Code(p)
			listing, err := disassemble(code, body)
			if err != nil {
				t.Errorf("%s (unchecked %v): %v", bm.Name, opts.Unchecked, err)
			}
			if os.Getenv("UEBPF_JIT_DUMP") != "" {
				t.Logf("%s (unchecked %v), %d bytes:\n%s", bm.Name, opts.Unchecked, len(code), listing)
			}
			coll.Close()
		}
	}
}
