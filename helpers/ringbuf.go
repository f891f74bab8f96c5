package helpers

import (
	"fmt"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Ring buffer helpers on maps.RingBufMap. A reserved record becomes a
// writable region of the run; submit and discard find the ring from the
// record pointer, as Linux does from the record header.
//
// Submit and discard only accept a pointer that reserve returned in this
// run and that is still reserved (see commitRecord); the record then stops
// being a region. Records of zero bytes would not be regions; reserving
// zero bytes therefore fails (NULL) where Linux returns an empty record.

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
	env.Hold(r, p) // discarded if the run ends without committing it
	return uint64(uintptr(p))
}

// ringbufSubmit is bpf_ringbuf_submit(data, flags): commit a reserved
// record. See commitRecord for what it accepts.
func ringbufSubmit(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	commitRecord(env, "bpf_ringbuf_submit", r1, r2, false)
	return 0
}

// ringbufDiscard is bpf_ringbuf_discard(data, flags): commit a reserved
// record as discarded; the reader skips it.
func ringbufDiscard(env *vm.Env, r1, r2, _, _, _ uint64) uint64 {
	commitRecord(env, "bpf_ringbuf_discard", r1, r2, true)
	return 0
}

// commitRecord commits the record at addr and withdraws its memory from the
// run: once committed, its bytes belong to the reader and then to later
// records, which the program must not rewrite.
//
// Linux's verifier only lets a program submit or discard the pointer that
// bpf_ringbuf_reserve returned, once. Unverified programs get the same
// rule at run time: any other address, an address inside a record, a
// record of another run or one already committed fails the run with an
// error wrapping maps.ErrInvalid (no errno: the helper returns void). The
// ring decides from the reservations it keeps in Go memory, never from
// the record header, which lies next to memory the program writes.
func commitRecord(env *vm.Env, name string, addr, flags uint64, discard bool) {
	// Only memory the run may write becomes a Go pointer: a number the
	// program made up could point into a free part of the heap.
	p, ok := env.Pointer(addr, 1, true)
	var r maps.RingBufMap
	if ok {
		r = maps.RingBufOf(p)
	}
	if r == nil {
		// No address in the message: it would differ between runs of the
		// same program (engines are compared by their errors).
		env.Fail(fmt.Errorf("%s: the pointer is not a ring buffer record reserved by this run: %w", name, maps.ErrInvalid))
		return
	}
	var err error
	if discard {
		err = r.Discard(p, flags)
	} else {
		err = r.Submit(p, flags)
	}
	if err != nil {
		env.Fail(fmt.Errorf("%s: the pointer is not a ring buffer record still reserved: %w", name, err))
		return
	}
	env.RemoveRegion(p, 1)
	env.Unhold(p)
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
