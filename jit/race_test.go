//go:build race

package jit_test

// raceBuild: the race detector slows the Go side of runs, and with it
// how soon the collector gets its stop of the world.
const raceBuild = true
