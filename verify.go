package uebpf

import (
	"fmt"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/verifier"
)

// verify runs the verifier on ep unless opts skip it, and returns the
// context size the program was proved safe for (-1: not verified). The
// size is Options.ContextSize, or else the size of the type the program's
// parameter points to in BTF.
func verify(ep *elf.Program, opts *Options) (int, error) {
	if opts.SkipVerification {
		return -1, nil
	}
	size, from := opts.ContextSize, "set by Options.ContextSize"
	if size == 0 {
		size, from = ep.ContextSize, "from the BTF type of its parameter"
		if size == 0 {
			from = "as none is known (a void * parameter or no BTF): set Options.ContextSize"
		}
	}
	vopts := &verifier.Options{ContextSize: size, LoopsBoundedByBudget: opts.LoopsBoundedByBudget, Log: opts.VerifierLog, LineInfo: ep.SourceLine}
	if _, err := verifier.Verify(ep.VM, vopts); err != nil {
		return 0, fmt.Errorf("program %s (section %s), %d-byte context %s: %w", ep.Name, ep.Section, size, from, err)
	}
	return size, nil
}
