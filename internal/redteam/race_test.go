//go:build race

package redteam

// raceBuild: the race detector slows helpers and the Go side of runs
// down several times, and with them how late a run notices its limit.
const raceBuild = true
