package helpers

import (
	"unsafe"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Map helpers: bpf_map_lookup_elem, update, delete, push, pop, peek and
// lookup_percpu_elem on the raw-pointer API of package maps.
//
// Linux's verifier refuses update, delete, push and pop on a map created
// with BPF_F_RDONLY_PROG; without a verifier the helpers refuse them at run
// time with -EPERM. Values of such maps are handed out read-only.

func mapLookupElem(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	w := view(env, r1)
	if w == nil {
		return 0
	}
	return w.lookup(env, r2, env.CPU())
}

// mapLookupPercpuElem looks up the value of another CPU's slot of a
// per-CPU map; other map types have none (NULL, as the verifier would
// refuse them).
func mapLookupPercpuElem(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
	w := view(env, r1)
	if w == nil || !w.m.Type().HasPerCPUValue() {
		return 0
	}
	return w.lookup(env, r2, int(uint32(r3)))
}

// mapUpdateElem is writableKey written out, with the common result (no
// error) answered inline: it is the hottest helper that cannot be
// answered without a call into the map.
func mapUpdateElem(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
	w := view(env, r1)
	if w == nil {
		return retEINVAL
	}
	if !w.writable {
		return retEPERM
	}
	key, ok := env.Pointer(r2, w.keySize, false)
	if !ok {
		return badPointer(w.keySize)
	}
	val, ok := env.Pointer(r3, w.valueSize, false)
	if !ok {
		return badPointer(w.valueSize)
	}
	if err := w.m.UpdateElem(key, val, r4, env.CPU()); err != nil {
		return mapErr(err)
	}
	return 0
}

func mapDeleteElem(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	w, key, errno := writableKey(env, r1, r2)
	if w == nil {
		return errno
	}
	return mapErr(w.m.DeleteElem(key))
}

// writableKey resolves the map and key arguments of a helper that changes
// the map; on failure w is nil and errno is the helper's return value.
func writableKey(env *vm.Env, mapPtr, keyAddr uint64) (w *mapView, key unsafe.Pointer, errno uint64) {
	if w = view(env, mapPtr); w == nil {
		return nil, nil, retEINVAL
	}
	if !w.writable {
		return nil, nil, retEPERM
	}
	key, ok := env.Pointer(keyAddr, w.keySize, false)
	if !ok {
		return nil, nil, badPointer(w.keySize)
	}
	return w, key, 0
}

// badPointer is the error for a key or value argument the run may not
// access: -EFAULT, or -EINVAL for a map type without keys or values
// (queues have no key), which Linux's verifier would have refused.
func badPointer(size uint64) uint64 {
	if size == 0 {
		return retEINVAL
	}
	return retEFAULT
}

// queueArg resolves the map argument of push, pop and peek: only queues
// and stacks implement them.
func queueArg(env *vm.Env, ptr uint64) maps.QueueMap {
	v, ok := env.Map(ptr)
	if !ok {
		return nil
	}
	q, _ := v.(maps.QueueMap)
	return q
}

func mapPushElem(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
	q := queueArg(env, r1)
	if q == nil {
		return retEINVAL
	}
	if q.ReadOnlyProg() {
		return retEPERM
	}
	val, ok := env.Pointer(r2, uint64(q.ValueSize()), false)
	if !ok {
		return retEFAULT
	}
	return mapErr(q.PushElem(val, r3))
}

func mapPopElem(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	q := queueArg(env, r1)
	if q == nil {
		return retEINVAL
	}
	if q.ReadOnlyProg() {
		return retEPERM
	}
	val, ok := env.Pointer(r2, uint64(q.ValueSize()), true)
	if !ok {
		return retEFAULT
	}
	return popped(val, q.ValueSize(), q.PopElem(val))
}

func mapPeekElem(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	q := queueArg(env, r1)
	if q == nil {
		return retEINVAL
	}
	val, ok := env.Pointer(r2, uint64(q.ValueSize()), true)
	if !ok {
		return retEFAULT
	}
	return popped(val, q.ValueSize(), q.PeekElem(val))
}

// popped finishes pop and peek: on failure (an empty map) Linux zeroes the
// destination, so the program never sees stale bytes.
func popped(val unsafe.Pointer, size uint32, err error) uint64 {
	if err != nil {
		clear(unsafe.Slice((*byte)(val), size))
	}
	return mapErr(err)
}
