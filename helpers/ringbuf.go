package helpers

import (
	"unsafe"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Ring buffer helpers on maps.RingBufMap. A reserved record becomes a
// writable region of the run; submit and discard find the ring from the
// record pointer, as Linux does from the record header.
//
// Submit and discard only accept a pointer into a writable region of the
// run, so that no address the program made up is ever turned into a Go
// pointer (the garbage collector may crash on a pointer into a free part
// of the heap). Records of zero bytes would not be regions; reserving zero
// bytes therefore fails (NULL) where Linux returns an empty record.

func ringArg(env *vm.Env, ptr uint64) maps.RingBufMap {
	v, ok := env.Map(ptr)
	if !ok {
		return nil
	}
	r, _ := v.(maps.RingBufMap)
	return r
}

// ringbufOutput is bpf_ringbuf_output(ringbuf, data, size, flags): copy
// size bytes into a new record. -EAGAIN when the ring is full (counted as
// a drop), -EINVAL for unknown flags.
func ringbufOutput(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
	r := ringArg(env, r1)
	if r == nil {
		return retEINVAL
	}
	var data []byte
	if r3 != 0 {
		var ok bool
		if data, ok = env.Bytes(r2, r3, false); !ok {
			return retEFAULT
		}
	}
	return mapErr(r.Output(data, r4))
}

// ringbufReserve is bpf_ringbuf_reserve(ringbuf, size, flags): a pointer to
// size writable bytes, or NULL when the ring is full or flags is not 0.
func ringbufReserve(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
	r := ringArg(env, r1)
	if r == nil || r2 == 0 || r3 != 0 {
		return 0
	}
	p := r.Reserve(r2)
	if p == nil {
		return 0
	}
	env.AddRegion(p, uintptr(r2), true)
	return uint64(uintptr(p))
}

// ringbufSubmit is bpf_ringbuf_submit(data, flags): commit a reserved
// record. A pointer that is not a record still reserved is ignored.
func ringbufSubmit(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	if p, r := record(env, r1); r != nil {
		r.Submit(p, r2)
	}
	return 0
}

// ringbufDiscard is bpf_ringbuf_discard(data, flags): commit a reserved
// record as discarded; the reader skips it.
func ringbufDiscard(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	if p, r := record(env, r1); r != nil {
		r.Discard(p, r2)
	}
	return 0
}

// record resolves the record argument of submit and discard.
func record(env *vm.Env, addr uint64) (unsafe.Pointer, maps.RingBufMap) {
	p, ok := env.Pointer(addr, 1, true)
	if !ok {
		return nil, nil
	}
	return p, maps.RingBufOf(p)
}

// ringbufQuery is bpf_ringbuf_query(ringbuf, flags): BPF_RB_AVAIL_DATA,
// BPF_RB_RING_SIZE, BPF_RB_CONS_POS or BPF_RB_PROD_POS; 0 otherwise.
func ringbufQuery(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	r := ringArg(env, r1)
	if r == nil {
		return 0
	}
	return r.Query(r2)
}
