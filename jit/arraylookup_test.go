package jit_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/enginebench"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// TestInlineArrayLookup: calls to an ArrayLookup helper on an array map are
// answered in generated code (amd64 and arm64: Go never answers them)
// exactly where the interpreter answers them;
// anything else reaches the helper. Each case runs on the interpreter and
// in every JIT mode, with the same r0, helper calls and map memory.
func TestInlineArrayLookup(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	array, err := maps.New(&maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 12, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := maps.New(&maps.Spec{Name: "h", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Elements of 8 bytes: a stride the known-array path scales in an lea.
	array8, err := maps.New(&maps.Spec{Name: "a8", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 5})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	helpers := vm.Helpers{1: {Name: "map_lookup_elem", ArrayLookup: true, Func: func(env *vm.Env, m, k, _, _, _ uint64) uint64 {
		calls++
		return 0xdead
	}}}
	const stackKey = "stw [%%r10-4], %d\nmov %%r2, %%r10\nadd %%r2, -4"
	// lookup(map, key), then store 7 into the value's second word and read
	// it back, so the returned address must also pass the memory checks.
	src := func(mapIndex int32, setup string) []asm.Instruction {
		insns := asm.MustAssemble(`
			mov %r6, %r1
			lddw %r1, 0
			` + setup + `
			call 1
			jeq %r0, 0, out
			jeq %r0, 0xdead, out
			stw [%r0+4], 7
			ldxw %r0, [%r0+4]
		out:
			exit`)
		insns[1].Src, insns[1].Imm = asm.PseudoMapFD, mapIndex
		return insns
	}
	key := func(k int) string { return fmt.Sprintf(stackKey, k) }
	cases := []struct {
		name      string
		mapIndex  int32
		setup     string
		want      uint64
		wantCalls int
		checked   bool // only in checked modes (the key is not readable)
	}{
		{"element 0", 0, key(0), 7, 0, false},
		{"element 3", 0, key(3), 7, 0, false},
		{"past the end", 0, key(4), 0, 0, false},
		{"far past the end", 0, key(-1), 0, 0, false},
		{"key in the context", 0, "stw [%r6+8], 2\nmov %r2, %r6\nadd %r2, 8", 7, 0, false},
		{"key at the end of the context", 0, "stw [%r6+12], 1\nmov %r2, %r6\nadd %r2, 12", 7, 0, false},
		{"map pointer in a register", 0, "mov %r3, %r1\nmov %r1, 0\n" + key(1) + "\nmov %r1, %r3", 7, 0, false},
		{"map pointer through memory", 0, "stxdw [%r10-16], %r1\nldxdw %r1, [%r10-16]\n" + key(2), 7, 0, false},
		{"key off the stack", 0, "mov %r2, 16", 0xdead, 1, true},
		{"key straddles the context", 0, "mov %r2, %r6\nadd %r2, 14", 0xdead, 1, true},
		{"key in another frame", 0, "mov %r2, %r10\nadd %r2, -514", 7, 0, false},
		{"key below the stack", 0, fmt.Sprintf("mov %%r2, %%r10\nadd %%r2, %d", -vm.StackSize-2), 0xdead, 1, true},
		{"hash map", 1, key(1), 0xdead, 1, false},
		{"hash map in a register", 1, "mov %r3, %r1\n" + key(1) + "\nmov %r1, %r3", 0xdead, 1, false},
		{"misaligned map pointer", 0, "add %r1, 8\n" + key(1), 0xdead, 1, false},
		{"past the map table", 2, "add %r1, 16\n" + key(1), 0xdead, 1, false},
		{"before the map table", 0, "add %r1, -16\n" + key(1), 0xdead, 1, false},
		{"not a map pointer", 0, "mov %r1, %r6\n" + key(1), 0xdead, 1, false},
		{"8-byte elements", 2, key(4), 7, 0, false},
		{"8-byte elements past the end", 2, key(5), 0, 0, false},
		{"8-byte elements in a register", 2, "mov %r3, %r1\n" + key(4) + "\nmov %r1, %r3", 7, 0, false},
	}
	mem := array.(maps.MemoryMap).Memory()
	mem8 := array8.(maps.MemoryMap).Memory()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: src(tc.mapIndex, tc.setup), Maps: []vm.Map{array, hash, array8}},
				&vm.Options{Helpers: helpers})
			if err != nil {
				t.Fatal(err)
			}
			run := func(p interface{ Exec(*vm.Env) (uint64, error) }) (uint64, int, []byte) {
				clear(mem)
				clear(mem8)
				calls = 0
				env := vm.NewEnv()
				env.SetContext(make([]byte, 16))
				r0, err := p.Exec(env)
				if err != nil {
					t.Fatal(err)
				}
				return r0, calls, append(bytes.Clone(mem), mem8...)
			}
			want, wantCalls, wantMem := run(vp)
			if want != tc.want || wantCalls != tc.wantCalls {
				t.Fatalf("interpreter: r0 = %#x, %d helper calls; want %#x, %d", want, wantCalls, tc.want, tc.wantCalls)
			}
			for _, o := range allModes {
				if tc.checked && o.Unchecked {
					continue
				}
				p, err := jit.Compile(vp, &o)
				if err != nil {
					t.Fatal(err)
				}
				got, gotCalls, gotMem := run(p)
				goAnswers := jit.GoAnswersArrays(p)
				p.Close()
				if goAnswers && jit.Inline {
					t.Fatalf("%+v: Go answers the lookups, not the code", o)
				}
				if got != want || gotCalls != wantCalls || !bytes.Equal(gotMem, wantMem) {
					t.Fatalf("%+v: r0 = %#x, %d helper calls, array % x; interpreter %#x, %d, % x",
						o, got, gotCalls, gotMem, want, wantCalls, wantMem)
				}
			}
		})
	}
	// The store went to element 3 at the kernel's stride (12 rounded up to
	// 16) in the JIT too (the last run of "element 3" was compiled).
	t.Run("stride", func(t *testing.T) {
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: src(0, key(3)), Maps: []vm.Map{array, hash, array8}}, &vm.Options{Helpers: helpers})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range allModes {
			clear(mem)
			p, err := jit.Compile(vp, &o)
			if err != nil {
				t.Fatal(err)
			}
			env := vm.NewEnv()
			env.SetContext(make([]byte, 16))
			if r0, err := p.Exec(env); r0 != 7 || err != nil {
				t.Fatalf("%+v: r0 = %#x, %v", o, r0, err)
			}
			p.Close()
			if mem[3*16+4] != 7 || bytes.Count(mem, []byte{0}) != len(mem)-1 {
				t.Fatalf("%+v: array = % x", o, mem)
			}
		}
	})
}

// TestInlineArrayLookupFar: thousands of lookups through the generic path
// (r1 not known), whose code spans several islands of out-of-line code on
// arm64, each with its copy of the array table: every lookup reaches its
// table and answers as the interpreter does.
func TestInlineArrayLookupFar(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	array, err := maps.New(&maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	const lookups = 6000
	var b strings.Builder
	b.WriteString("lddw %r7, 0\nmov %r6, 0\n")
	for i := range lookups {
		fmt.Fprintf(&b, "stw [%%r10-4], %d\nmov %%r1, %%r7\nmov %%r2, %%r10\nadd %%r2, -4\ncall 1\n", i%5)
		fmt.Fprintf(&b, "jeq %%r0, 0, l%d\nstw [%%r0+0], %d\nadd %%r6, 1\nl%d:\n", i, i, i)
	}
	b.WriteString("mov %r0, %r6\nexit")
	insns := asm.MustAssemble(b.String())
	insns[0].Src = asm.PseudoMapFD
	helpers := vm.Helpers{1: {Name: "map_lookup_elem", ArrayLookup: true, Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 {
		t.Error("helper called")
		return 0
	}}}
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{array}}, &vm.Options{Helpers: helpers})
	if err != nil {
		t.Fatal(err)
	}
	mem := array.(maps.MemoryMap).Memory()
	for _, o := range allModes {
		p, err := jit.Compile(vp, &o)
		if err != nil {
			t.Fatal(err)
		}
		clear(mem)
		r0, err := p.Exec(vm.NewEnv())
		if want := uint64(lookups / 5 * 4); r0 != want || err != nil {
			t.Errorf("%+v: r0 = %d, %v; want %d", o, r0, err, want)
		}
		// The last stores to elements 0-3.
		for k := range 4 {
			if got, want := binary.LittleEndian.Uint32(mem[8*k:]), uint32(lookups-5+k); got != want {
				t.Errorf("%+v: element %d = %d, want %d", o, k, got, want)
			}
		}
		if jit.Inline && jit.GoAnswersArrays(p) {
			t.Errorf("%+v: Go answers the lookups", o)
		}
		p.Close()
	}
}

// BenchmarkArrayLookup measures inline lookups in a 1,024-entry array of
// 8-byte values: a loop of 1,000 lookups, each followed by a load of the
// value, as map_array_lookup of the standard set. ns/lookup is the time per
// iteration of the loop, 8 eBPF instructions besides the call included.
func BenchmarkArrayLookup(b *testing.B) {
	array, err := maps.New(&maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	if err != nil {
		b.Fatal(err)
	}
	helpers := vm.Helpers{1: {Name: "map_lookup_elem", ArrayLookup: true, Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 {
		b.Fatal("the helper ran")
		return 0
	}}}
	insns := asm.MustAssemble(`
		mov %r6, 0
		mov %r7, 0
	loop:
		mov %r2, %r6
		and %r2, 1023
		stxw [%r10-4], %r2
		lddw %r1, 0
		mov %r2, %r10
		add %r2, -4
		call 1
		jeq %r0, 0, next
		ldxdw %r3, [%r0]
		add %r7, %r3
	next:
		add %r6, 1
		jne %r6, 1000, loop
		mov %r0, %r7
		exit`)
	insns[5].Src, insns[5].Imm = asm.PseudoMapFD, 0
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{array}}, &vm.Options{Helpers: helpers})
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct {
		name string
		opts jit.Options
	}{{"checked", jit.Options{}}, {"unchecked", jit.Options{Unchecked: true}}} {
		b.Run(m.name, func(b *testing.B) {
			p := compile(b, vp, m.opts)
			env := vm.NewEnv()
			if _, err := p.Exec(env); err != nil {
				b.Fatal(err)
			}
			stop := enginebench.CPU(b)
			for b.Loop() {
				p.Exec(env)
			}
			stop()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/lookup")
		})
	}
}
