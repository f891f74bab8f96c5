package asm_test

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
)

// hexBytes turns "c3 1a fc ff ..." into bytes; the test data is written as
// the little-endian slots the ISA defines.
func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad test data %q: %v", s, err)
	}
	return b
}

// requireRoundTrip checks that the text of insns assembles back to insns.
func requireRoundTrip(t testing.TB, insns []asm.Instruction) string {
	t.Helper()
	text, _ := asm.Disassemble(insns)
	back, err := asm.Assemble(text)
	if err != nil {
		t.Fatalf("disassembly does not assemble: %v\n%s", err, text)
	}
	if !slices.Equal(back, insns) {
		t.Fatalf("round trip changed the program\nwant % x\ngot  % x\ntext:\n%s",
			asm.Encode(nil, insns), asm.Encode(nil, back), text)
	}
	return text
}
