package helpers_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// FuzzHelpers calls standard helpers with arguments drawn from the input:
// raw numbers, pointers into and around the stack and the context, map
// pointers (also off by a little), function addresses, and the r0 of the
// previous call. Whatever the arguments, a helper must neither crash the
// process nor panic (the VM would turn a panic into ErrHelperPanicked).
func FuzzHelpers(f *testing.F) {
	set := helpers.Standard(nil)
	nums := make([]int32, 0, len(set))
	for n := range set {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	index := func(num int32) byte { return byte(slices.Index(nums, num)) }

	ms := fuzzMaps(f)
	seed := func(calls ...[]byte) []byte { return slices.Concat(calls...) }
	call := func(num int32, args ...[2]uint64) []byte {
		b := []byte{index(num)}
		for i := range 5 {
			var a [2]uint64
			if i < len(args) {
				a = args[i]
			}
			b = append(b, byte(a[0]))
			b = binary.LittleEndian.AppendUint64(b, a[1])
		}
		return b
	}
	const (
		raw = iota
		stack
		mapPtr
		ctx
		fn
		small
		ctxEnd
		prevR0
	)
	a := func(kind, v uint64) [2]uint64 { return [2]uint64{kind, v} }
	f.Add(seed(call(helpers.MapLookupElem, a(mapPtr, 0), a(stack, 8))))
	f.Add(seed(call(helpers.MapUpdateElem, a(mapPtr, 1), a(stack, 8), a(stack, 24), a(raw, 0))))
	f.Add(seed(call(helpers.RingbufReserve, a(mapPtr, 4), a(small, 16)), call(helpers.RingbufSubmit, a(prevR0, 0))))
	f.Add(seed(call(helpers.Snprintf, a(ctx, 0), a(small, 32), a(ctx, 64), a(ctx, 128), a(small, 16))))
	f.Add(seed(call(helpers.TracePrintk, a(ctx, 64), a(small, 20), a(ctx, 0), a(raw, 5))))
	f.Add(seed(call(helpers.Loop, a(small, 5), a(fn, 0), a(stack, 8), a(raw, 0))))
	f.Add(seed(call(helpers.TailCall, a(ctx, 0), a(mapPtr, 5), a(small, 0))))
	f.Add(seed(call(helpers.ProbeReadUserStr, a(stack, 64), a(small, 64), a(raw, 0xdeadbeef))))
	f.Add(seed(call(helpers.MapPopElem, a(mapPtr, 3), a(ctxEnd, 4))))
	f.Add(seed(call(helpers.Strncmp, a(ctx, 0), a(small, 60), a(ctxEnd, 2))))

	f.Fuzz(func(t *testing.T, data []byte) {
		const callSize = 1 + 5*9
		var lines []string
		hasFn := false
		for c := 0; c < 2 && len(data) >= callSize; c++ {
			num := nums[int(data[0])%len(nums)]
			for i := range 5 {
				kind := data[1+9*i] % 8
				v := binary.LittleEndian.Uint64(data[2+9*i:])
				r := fmt.Sprintf("%%r%d", i+1)
				switch kind {
				case raw:
					lines = append(lines, fmt.Sprintf("lddw %s, %d", r, v))
				case stack:
					lines = append(lines, fmt.Sprintf("mov %s, %%r10", r), fmt.Sprintf("add %s, -%d", r, v%600))
				case mapPtr:
					lines = append(lines, fmt.Sprintf("lddw %s, map_by_fd(%d)", r, v%uint64(len(ms))))
					if v&0x100 != 0 {
						lines = append(lines, fmt.Sprintf("add %s, %d", r, int8(v>>16)))
					}
				case ctx:
					lines = append(lines, fmt.Sprintf("mov %s, %%r6", r), fmt.Sprintf("add %s, %d", r, v%300))
				case fn:
					lines = append(lines, fmt.Sprintf("lddw %s, code_addr(0)", r))
					hasFn = true
				case small:
					lines = append(lines, fmt.Sprintf("mov %s, %d", r, v%80))
				case ctxEnd:
					lines = append(lines, fmt.Sprintf("mov %s, %%r6", r), fmt.Sprintf("add %s, %d", r, 256-int64(v%16)))
				case prevR0:
					lines = append(lines, fmt.Sprintf("mov %s, %%r7", r))
				}
			}
			lines = append(lines, fmt.Sprintf("call %d", num), "mov %r7, %r0")
			data = data[callSize:]
		}
		if len(lines) == 0 {
			return
		}
		main := "mov %r6, %r1\nmov %r7, 0\n" + strings.Join(lines, "\n") + "\nexit"
		insns, err := asm.Assemble(main)
		if err != nil {
			t.Fatalf("assemble: %v\n%s", err, main)
		}
		if hasFn { // every function address points at a callback returning 0 or 1
			for i, in := range insns {
				if in.Opcode == asm.OpLDDW && in.Src == asm.PseudoFunc {
					insns[i].Imm = int32(len(insns) - i - 1)
				}
			}
			insns = append(insns, assemble(t, "mov %r0, %r1\nand %r0, 1\nexit")...)
		}
		p, err := vm.Load(&vm.ProgramSpec{Name: "fuzz", Instructions: insns, Maps: ms}, &vm.Options{Helpers: set})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		env := vm.NewEnv()
		mem := make([]byte, 256)
		copy(mem, "%d %s %c %pI4 %pks %ps %5x\x00")
		copy(mem[64:], "fmt %llu %p\x00")
		for i := 128; i < 256; i += 8 {
			binary.NativeEndian.PutUint64(mem[i:], uint64(i)*0x0101010101)
		}
		env.SetContext(mem)
		env.SetBudget(100_000)
		if _, err := p.Exec(env); errors.Is(err, vm.ErrHelperPanicked) {
			t.Fatalf("%v\n%s", err, main)
		}
	})
}

// fuzzMaps are the maps fuzzed programs reach: 0 array, 1 hash, 2
// per-CPU array, 3 queue, 4 ring buffer, 5 program array, 6 read-only
// array.
func fuzzMaps(f *testing.F) []vm.Map {
	mk := func(spec maps.Spec) maps.Map {
		if spec.Name == "" {
			spec.Name = "m"
		}
		m, err := maps.New(&spec)
		if err != nil {
			f.Fatal(err)
		}
		return m
	}
	ms := []vm.Map{
		mk(maps.Spec{Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 4}),
		mk(maps.Spec{Type: maps.Hash, KeySize: 8, ValueSize: 16, MaxEntries: 8}),
		mk(maps.Spec{Type: maps.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 2}),
		mk(maps.Spec{Type: maps.Queue, ValueSize: 8, MaxEntries: 4}),
		mk(maps.Spec{Type: maps.RingBuf, MaxEntries: 4096}),
		mk(maps.Spec{Type: maps.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 2}),
		mk(maps.Spec{Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 2, Flags: maps.FlagRdOnlyProg}),
	}
	leaf, err := vm.Load(&vm.ProgramSpec{Name: "leaf", Instructions: assemble(f, "mov %r0, 7\nexit"), Maps: ms}, nil)
	if err != nil {
		f.Fatal(err)
	}
	ms[5].(maps.ProgArrayMap).SetProgram(0, leaf)
	return ms
}
