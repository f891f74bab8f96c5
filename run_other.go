//go:build !(linux && amd64)

package uebpf

func run(p *Program, ctx []byte) (uint64, error) { return p.runSlow(ctx) }
