//go:build !race

package vm

import "unsafe"

func raceAcquire(unsafe.Pointer) {}
func raceRelease(unsafe.Pointer) {}
