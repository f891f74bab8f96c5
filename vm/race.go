//go:build race

package vm

import (
	"runtime"
	"unsafe"
)

const raceEnabled = true

// The lean caches are used pinned to a P, which the race detector does
// not see as synchronisation: a P's pinned sections are its critical
// sections.

func raceAcquire(p unsafe.Pointer) { runtime.RaceAcquire(p) }
func raceRelease(p unsafe.Pointer) { runtime.RaceRelease(p) }
