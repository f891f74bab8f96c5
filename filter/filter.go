package filter

import (
	"fmt"
	"slices"

	"github.com/uebpf/uebpf/asm"
)

// Filter is a compiled filter expression.
type Filter struct {
	expr  string
	insns []asm.Instruction
	uses  []string
	size  int
}

// Compile parses expr, checks its types against fields and generates its
// eBPF code, within the default Limits. Syntax and type errors, and
// expressions over a limit, are *Error values naming the column.
func Compile(expr string, fields []Field) (*Filter, error) {
	return CompileLimits(expr, fields, Limits{})
}

// CompileLimits is Compile within lim.
func CompileLimits(expr string, fields []Field, lim Limits) (*Filter, error) {
	lim, err := lim.resolve()
	if err != nil {
		return nil, err
	}
	n, err := parse(expr, fields, &lim)
	if err != nil {
		return nil, err
	}
	size, err := checkCost(n, lim.MaxInstructions)
	if err != nil {
		return nil, err
	}
	insns, err := generate(n, size)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	f := &Filter{expr: expr, insns: insns, size: recordSize(n)}
	walk(n, func(n *node) {
		if n.op == opField && !slices.Contains(f.uses, n.field.Name) {
			f.uses = append(f.uses, n.field.Name)
		}
	})
	return f, nil
}

// Instructions returns the filter's program: r1 points to the record, r0
// is 1 to keep the event and 0 to drop it. It calls no helpers and reads
// only the first RecordSize bytes of the record, which the verifier can
// prove with a context of that size.
func (f *Filter) Instructions() []asm.Instruction {
	return append([]asm.Instruction(nil), f.insns...)
}

// Expr returns the expression the filter was compiled from.
func (f *Filter) Expr() string { return f.expr }

// Uses returns the names of the fields the filter reads, in the order they
// first appear, so that a caller fills only the context fields it needs.
func (f *Filter) Uses() []string { return append([]string(nil), f.uses...) }

// RecordSize returns the smallest record the code may read: the end of
// the last field it uses.
func (f *Filter) RecordSize() int { return f.size }
