package elf_test

import (
	"unsafe"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// testHelpers is a small stand-in for package helpers' standard set: the
// helpers the test objects call, with Linux numbers.
func testHelpers() vm.Helpers {
	return vm.Helpers{
		1: {Name: "bpf_map_lookup_elem", Func: lookupElem, Proto: &vm.Prototype{}},
		2: {Name: "bpf_map_update_elem", Func: updateElem, Proto: &vm.Prototype{}},
		6: {Name: "bpf_trace_printk", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 },
			Proto: &vm.Prototype{GPLOnly: true}},
		12:  {Name: "bpf_tail_call", Func: tailCall, Proto: &vm.Prototype{}},
		130: {Name: "bpf_ringbuf_output", Func: ringbufOutput, Proto: &vm.Prototype{}},
		181: {Name: "bpf_loop", Func: loop, Proto: &vm.Prototype{}},
	}
}

func mapArg(env *vm.Env, ptr uint64) maps.Map {
	m, _ := env.Map(ptr)
	mm, _ := m.(maps.Map)
	return mm
}

func lookupElem(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	m := mapArg(env, r1)
	if m == nil {
		return 0
	}
	key, ok := env.Pointer(r2, uint64(m.KeySize()), false)
	if !ok {
		return 0
	}
	v := m.LookupElem(key, env.CPU())
	if v == nil {
		return 0
	}
	env.AddRegion(v, uintptr(m.ValueSize()), !m.ReadOnlyProg())
	return uint64(uintptr(v))
}

func updateElem(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
	m := mapArg(env, r1)
	if m == nil {
		return ^uint64(21) // -EINVAL
	}
	key, ok1 := env.Pointer(r2, uint64(m.KeySize()), false)
	val, ok2 := env.Pointer(r3, uint64(m.ValueSize()), false)
	if !ok1 || !ok2 {
		return ^uint64(13) // -EFAULT
	}
	return uint64(maps.Errno(m.UpdateElem(key, val, r4, env.CPU())))
}

func tailCall(env *vm.Env, _, r2, r3, _, _ uint64) uint64 {
	pa, ok := mapArg(env, r2).(maps.ProgArrayMap)
	if !ok {
		return ^uint64(21)
	}
	p, _ := pa.Program(uint32(r3)).(*vm.Program)
	if !env.TailCall(p) {
		return ^uint64(1) // -ENOENT
	}
	return 0
}

func ringbufOutput(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
	rb, ok := mapArg(env, r1).(maps.RingBufMap)
	if !ok {
		return ^uint64(21)
	}
	data, ok := env.Bytes(r2, r3, false)
	if !ok {
		return ^uint64(13)
	}
	return uint64(maps.Errno(rb.Output(data, r4)))
}

func loop(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
	for i := uint64(0); i < r1; i++ {
		r0, err := env.CallFunction(r2, [5]uint64{i, r3})
		if err != nil {
			env.Fail(err)
			return 0
		}
		if r0 == 1 {
			return i + 1
		}
	}
	return r1
}

var _ = unsafe.Pointer(nil)
