package vm_test

import (
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// TestInlineArrayLookup: calls to an ArrayLookup helper on an array map or
// a hash map of package maps are answered in the interpreter; anything
// else reaches the helper.
func TestInlineArrayLookup(t *testing.T) {
	array, err := maps.New(&maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 12, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := maps.New(&maps.Spec{Name: "h", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	one, v := uint32(1), [2]uint32{}
	if err := hash.UpdateElem(unsafe.Pointer(&one), unsafe.Pointer(&v), 0, 0); err != nil {
		t.Fatal(err)
	}
	calls := 0
	helpers := vm.Helpers{1: {Name: "map_lookup_elem", ArrayLookup: true, HashLookup: true, Func: func(env *vm.Env, m, k, _, _, _ uint64) uint64 {
		calls++
		return 0xdead
	}}}
	// lookup(map, key), then store 7 into the value's second word and read
	// it back, so the returned address must also pass the memory checks.
	src := func(mapIndex int32, key string) []asm.Instruction {
		insns := asm.MustAssemble(`
			lddw %r1, 0
			` + key + `
			call 1
			jeq %r0, 0, out
			jeq %r0, 0xdead, out
			stw [%r0+4], 7
			ldxw %r0, [%r0+4]
		out:
			exit`)
		insns[0].Src, insns[0].Imm = asm.PseudoMapFD, mapIndex
		return insns
	}
	cases := []struct {
		name      string
		mapIndex  int32
		key       string
		want      uint64
		wantCalls int
	}{
		{"element 3", 0, "stw [%r10-4], 3\nmov %r2, %r10\nadd %r2, -4", 7, 0},
		{"past the end", 0, "stw [%r10-4], 4\nmov %r2, %r10\nadd %r2, -4", 0, 0},
		{"key off the stack", 0, "mov %r2, 16", 0xdead, 1},
		{"hash map", 1, "stw [%r10-4], 1\nmov %r2, %r10\nadd %r2, -4", 7, 0},
		{"hash map, missing key", 1, "stw [%r10-4], 2\nmov %r2, %r10\nadd %r2, -4", 0, 0},
		{"hash map, key off the stack", 1, "mov %r2, 16", 0xdead, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls = 0
			p, err := vm.Load(&vm.ProgramSpec{Instructions: src(tc.mapIndex, tc.key), Maps: []vm.Map{array, hash}},
				&vm.Options{Helpers: helpers})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Run(nil)
			if err != nil || got != tc.want || calls != tc.wantCalls {
				t.Fatalf("r0 = %#x, %v, %d helper calls; want %#x, %d calls", got, err, calls, tc.want, tc.wantCalls)
			}
		})
	}
	// The store went to element 3 at the kernel's stride (12 rounded up to 16).
	if mem := array.(maps.MemoryMap).Memory(); mem[3*16+4] != 7 {
		t.Fatalf("element 3 = % x", mem[3*16:3*16+12])
	}
}
