package maps

import (
	"runtime"
	"sync/atomic"

	"github.com/uebpf/uebpf/internal/order"
)

// stripeLock is the lock of a stripe of hash map slots (writers of keys
// whose home slot falls in the stripe). Its critical sections are a probe
// and a copy of a value, or an insert or delete: a spin lock that yields
// to the scheduler when it waits long serves them better than a
// sync.Mutex, whose unlock is a locked read-modify-write. Here the unlock
// is a plain store where the memory model of the CPU makes that a release
// (amd64), so an update of an existing key costs one locked instruction
// instead of two; on a program-side update, which follows the stores of a
// helper exit, each locked instruction waits for the store buffer to
// drain.
type stripeLock struct {
	state uint32 // 1: held
	_     [cacheLine - 4]byte
}

// Lock takes the lock.
func (l *stripeLock) Lock() {
	if atomic.CompareAndSwapUint32(&l.state, 0, 1) {
		return
	}
	l.lockSlow()
}

func (l *stripeLock) lockSlow() {
	for i := 0; ; i++ {
		if atomic.LoadUint32(&l.state) == 0 && atomic.CompareAndSwapUint32(&l.state, 0, 1) {
			return
		}
		if i >= 32 {
			// The holder may have been preempted: let it run.
			runtime.Gosched()
		}
	}
}

// TryLock takes the lock if it is free and reports whether it did.
func (l *stripeLock) TryLock() bool {
	return atomic.LoadUint32(&l.state) == 0 && atomic.CompareAndSwapUint32(&l.state, 0, 1)
}

// Unlock releases the lock, which the caller holds.
func (l *stripeLock) Unlock() { order.StoreRelease32(&l.state, 0) }
