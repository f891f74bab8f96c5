//go:build !race

package vm

import "unsafe"

const raceEnabled = false

func raceAcquire(unsafe.Pointer) {}
func raceRelease(unsafe.Pointer) {}
