//go:build race

package jit_test

// raceBuild: the race detector slows the Go side of runs and the
// collector itself, on a machine that runs other packages' tests at the
// same time, so pause bounds only tell a stalled collector from a slow one.
const raceBuild = true
