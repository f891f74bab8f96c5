package verifier_test

import (
	"testing"

	"github.com/uebpf/uebpf/filter"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// filterProgram is a tracepoint filter as tracepoint.Filter builds it: a
// few loads from a 96-byte record and a chain of comparisons.
func filterProgram(tb testing.TB) *vm.Program {
	tb.Helper()
	fields := []filter.Field{
		{Name: "status", Kind: filter.Unsigned, Size: 2, Offset: 72},
		{Name: "duration_us", Kind: filter.Unsigned, Size: 8, Offset: 80},
		{Name: "bytes", Kind: filter.Unsigned, Size: 8, Offset: 88},
	}
	f, err := filter.Compile("status >= 500 || duration_us > 20000 || bytes > 1048576 || status == 404", fields)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: "filter", Instructions: f.Instructions()}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkVerifyFilter verifies a small tracepoint filter, as every
// attachment of one does: what matters here is allocs/op and B/op (the
// garbage collector's share of attaching).
func BenchmarkVerifyFilter(b *testing.B) {
	benchVerify(b, filterProgram(b), verifier.Options{ContextSize: 96, ContextReadOnly: true})
}
