package verifier_test

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// testMaps are the maps programs in the tests refer to by index:
// 0: array  key 4, value 16, 4 entries
// 1: hash   key 8, value 8
// 2: ringbuf 4096
// 3: prog array 4 entries
// 4: .rodata array (BPF_F_RDONLY_PROG), value 16, holding "hi %d\n\0"
// 5: .data array, value 16, 1 entry
func testMaps(t testing.TB) []vm.Map {
	t.Helper()
	specs := []*maps.Spec{
		{Name: "array", Type: maps.Array, KeySize: 4, ValueSize: 16, MaxEntries: 4},
		{Name: "hash", Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 16},
		{Name: "rb", Type: maps.RingBuf, MaxEntries: 4096},
		{Name: "progs", Type: maps.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 4},
		{Name: ".rodata", Type: maps.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1, Flags: 0x80},
		{Name: ".data", Type: maps.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1},
	}
	var out []vm.Map
	for _, s := range specs {
		m, err := maps.New(s)
		if err != nil {
			t.Fatalf("map %s: %v", s.Name, err)
		}
		if s.Name == ".rodata" {
			copy(m.(maps.MemoryMap).Memory(), "hi %d\n\x00")
		}
		out = append(out, m)
	}
	return out
}

// testHelpers are a few standard helpers, written here so that the
// verifier's tests do not depend on package helpers, with their Linux
// prototypes, plus two application helpers.
var testHelpers = func() vm.Helpers {
	proto := func(ret vm.ReturnKind, args ...vm.ArgKind) *vm.Prototype {
		p := &vm.Prototype{Ret: ret, RetSizeArg: -1}
		copy(p.Args[:], args)
		return p
	}
	lookup := func(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
		m, ok := env.Map(r1)
		if !ok {
			return 0
		}
		mm := m.(maps.Map)
		key, ok := env.Pointer(r2, uint64(mm.KeySize()), false)
		if !ok {
			env.Fail(errors.New("bad key"))
			return 0
		}
		v := mm.LookupElem(key, 0)
		if v == nil {
			return 0
		}
		env.AddRegion(v, uintptr(mm.ValueSize()), !mm.ReadOnlyProg())
		return uint64(uintptr(v))
	}
	update := func(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
		m, ok := env.Map(r1)
		if !ok {
			return 1
		}
		mm := m.(maps.Map)
		key, ok1 := env.Pointer(r2, uint64(mm.KeySize()), false)
		val, ok2 := env.Pointer(r3, uint64(mm.ValueSize()), false)
		if !ok1 || !ok2 {
			env.Fail(errors.New("bad key or value"))
			return 0
		}
		if mm.UpdateElem(key, val, r4, 0) != nil {
			return 1
		}
		return 0
	}
	reserve := func(env *vm.Env, _, r2, _, _, _ uint64) uint64 {
		if r2 == 0 || r2 > 1<<20 {
			return 0
		}
		b := make([]byte, (r2+7)&^7)
		env.AddBytes(b, true)
		return uint64(uintptr(unsafe.Pointer(&b[0])))
	}
	nop := func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }
	// loop is bpf_loop capped at 16 calls, so that fuzzed programs stay
	// within their instruction budget (which bounds each call).
	loop := func(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
		if r4 != 0 {
			return ^uint64(21) // -EINVAL
		}
		n := min(uint32(r1), 16)
		for i := range n {
			ret, err := env.CallFunction(r2, [5]uint64{uint64(i), r3})
			if err != nil {
				env.Fail(err)
				return uint64(i)
			}
			if ret != 0 {
				return uint64(i) + 1
			}
		}
		return uint64(n)
	}
	return vm.Helpers{
		1:   {Name: "map_lookup_elem", Func: lookup, Proto: proto(vm.RetMapValueOrNull, vm.ArgMapPointer, vm.ArgMapKey)},
		2:   {Name: "map_update_elem", Func: update, Proto: proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMapKey, vm.ArgMapValue, vm.ArgAnything)},
		3:   {Name: "map_delete_elem", Func: nop, Proto: proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMapKey)},
		5:   {Name: "ktime_get_ns", Func: nop, Proto: proto(vm.RetInteger)},
		6:   {Name: "trace_printk", Func: nop, Proto: proto(vm.RetInteger, vm.ArgMemory, vm.ArgConstSize)},
		7:   {Name: "get_prandom_u32", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 12345 }, Proto: proto(vm.RetInteger)},
		12:  {Name: "tail_call", Func: nop, Proto: proto(vm.RetVoid, vm.ArgContext, vm.ArgMapPointer, vm.ArgAnything)},
		16:  {Name: "get_current_comm", Func: nop, Proto: proto(vm.RetInteger, vm.ArgUninitMemory, vm.ArgConstSize)},
		130: {Name: "ringbuf_output", Func: nop, Proto: proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMemory, vm.ArgConstSizeOrZero, vm.ArgAnything)},
		131: {Name: "ringbuf_reserve", Func: reserve, Proto: &vm.Prototype{
			Args: [5]vm.ArgKind{vm.ArgMapPointer, vm.ArgConstSizeOrZero, vm.ArgAnything}, Ret: vm.RetAcquiredRecordOrNull, RetSizeArg: 1}},
		132:     {Name: "ringbuf_submit", Func: nop, Proto: proto(vm.RetVoid, vm.ArgReleasedRecord, vm.ArgAnything)},
		133:     {Name: "ringbuf_discard", Func: nop, Proto: proto(vm.RetVoid, vm.ArgReleasedRecord, vm.ArgAnything)},
		165:     {Name: "snprintf", Func: nop, Proto: proto(vm.RetInteger, vm.ArgUninitMemory, vm.ArgConstSizeOrZero, vm.ArgConstString, vm.ArgMemory, vm.ArgConstSizeOrZero)},
		181:     {Name: "loop", Func: loop, Proto: proto(vm.RetInteger, vm.ArgAnything, vm.ArgFunction, vm.ArgAnything, vm.ArgAnything)},
		0x10000: {Name: "app_sum", Func: nop, Proto: proto(vm.RetInteger, vm.ArgMemory, vm.ArgConstSize)},
		0x10001: {Name: "no_proto", Func: nop},
	}
}()

func loadAsm(t testing.TB, src string) *vm.Program {
	t.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatalf("assemble: %v\n%s", err, src)
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: "test", Instructions: insns, Maps: testMaps(t)}, &vm.Options{Helpers: testHelpers})
	if err != nil {
		t.Fatalf("load: %v\n%s", err, src)
	}
	return p
}

const testCtxSize = 64

func verifyAsm(t testing.TB, src string, opts *verifier.Options) error {
	t.Helper()
	if opts == nil {
		opts = &verifier.Options{ContextSize: testCtxSize}
	}
	_, err := verifier.Verify(loadAsm(t, src), opts)
	return err
}

func checkRejected(t *testing.T, err error, rule error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %v containing %q", rule, msg)
	}
	var ve *verifier.Error
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *verifier.Error", err)
	}
	if !errors.Is(err, rule) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("error:\n%v\nwant %v containing %q", err, rule, msg)
	}
}
