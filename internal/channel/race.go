//go:build race

package channel

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// A shard's pinned sections are its critical sections, which the race
// detector does not see as synchronisation.

func raceAcquire(p unsafe.Pointer) { runtime.RaceAcquire(p) }
func raceRelease(p unsafe.Pointer) { runtime.RaceRelease(p) }

// bump adds one to a counter its shard's writer owns and others read.
func bump(p *uint64) uint64 { return atomic.AddUint64(p, 1) }
