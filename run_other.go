//go:build !(linux && amd64)

package uebpf

import "github.com/uebpf/uebpf/jit"

func run(p *Program, ctx []byte) (uint64, error) { return p.runSlow(ctx) }

func jitPlain(*jit.Program) bool { return false }
