package conformance

import (
	"errors"
	"fmt"

	"github.com/uebpf/uebpf/asm"
)

// Instructions returns the test's program: the "-- raw" section when there
// is one, else the assembled "-- asm" section. Assembler errors carry line
// numbers of the .data file, not of the section.
func (t *Test) Instructions() ([]asm.Instruction, error) {
	if t.Raw != nil {
		insns, err := asm.Decode(t.Raw)
		if err != nil {
			return nil, fmt.Errorf("%s: raw section: %w", t.Name, err)
		}
		return insns, nil
	}
	insns, err := asm.Assemble(t.Asm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, t.fileLines(err))
	}
	return insns, nil
}

// fileLines shifts the line numbers of assembler errors from the section
// to the file.
func (t *Test) fileLines(err error) error {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return err
	}
	var out []error
	for _, e := range joined.Unwrap() {
		var le *asm.LineError
		if errors.As(e, &le) && t.AsmLine > 0 {
			e = &asm.LineError{Line: le.Line + t.AsmLine - 1, Err: le.Err}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
