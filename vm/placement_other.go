//go:build !amd64

package vm

// dispatch is the dispatch loop. Only amd64 has placement copies of it
// (placement_amd64.go): the effect was measured there.
var dispatch = (*Env).interpret
