//go:build race

package channel

import (
	"runtime"
	"unsafe"
)

// A shard's pinned sections are its critical sections, which the race
// detector does not see as synchronisation.

func raceAcquire(p unsafe.Pointer) { runtime.RaceAcquire(p) }
func raceRelease(p unsafe.Pointer) { runtime.RaceRelease(p) }
