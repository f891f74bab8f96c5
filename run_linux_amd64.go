package uebpf

// run is Program.Run: it checks the context's length and jumps to the
// JIT's run with its arguments in place, or continues in runSlowABI (see
// run_linux_amd64.s).
func run(p *Program, ctx []byte) (r0 uint64, err error)

// runSlowABI is run's path to everything but a JIT run with a long
// enough context.
func runSlowABI(p *Program, ctx []byte) (uint64, error) { return p.runSlow(ctx) }
