package tracepoint

import (
	"fmt"
	"strconv"

	"github.com/uebpf/uebpf/filter"
	"github.com/uebpf/uebpf/vm"
)

// Filter attaches a filter expression (package filter, LTTng syntax) over
// the tracepoint's fields and context fields ($ctx.vtid ...): events for
// which it is not zero are kept. It is compiled to eBPF, verified for the
// tracepoint's record and run by the JIT where there is one. The context
// fields it names are the only ones filled before it runs.
func Filter(expr string) Option {
	return func(c *config) {
		c.sources = append(c.sources, func(p *Point, a *Attachment, cfg *config) error {
			f, err := filter.Compile(expr, p.filterFields())
			if err != nil {
				return fmt.Errorf("filter %s: %w", quoteShort(expr), err)
			}
			prog, err := vm.Load(&vm.ProgramSpec{Name: "filter", Instructions: f.Instructions()}, nil)
			if err != nil {
				return fmt.Errorf("filter %s: loading: %w", quoteShort(expr), err)
			}
			// A filter that reads no context field and nothing past the
			// payload runs on the caller's payload, saving the copy of it.
			uses := needsOf(f.Uses())
			payloadOnly := uses == 0 && f.RecordSize() <= p.info.Size && p.info.Size > 0
			if err := prepare(p, a, prog, cfg.interpreted, payloadOnly); err != nil {
				return fmt.Errorf("filter %s: %w", quoteShort(expr), err)
			}
			a.expr = expr // String quotes it: one Sprintf less per attach
			a.needs |= uses
			return nil
		})
	}
}

// quoteShort quotes a filter expression for an error, cut after 100
// bytes: a refused expression may be as long as a control request.
func quoteShort(expr string) string {
	if len(expr) <= 100 {
		return strconv.Quote(expr)
	}
	return fmt.Sprintf("%q... (%d bytes)", expr[:100], len(expr))
}

// FilterFields are the fields of a tracepoint's record, the payload's and
// the context block's, as package filter reads them.
func FilterFields(info Info) []filter.Field {
	// One slice, without RecordFields' intermediate ones: this runs on
	// every attach of a filter.
	out := make([]filter.Field, 0, len(info.Fields)+len(contextFields))
	out = append(out, info.Fields...)
	for _, f := range contextFields {
		f.Offset += info.ContextOffset()
		out = append(out, f)
	}
	return out
}

// filterFields returns FilterFields(p.info), made once per tracepoint.
func (p *Point) filterFields() []filter.Field {
	if f := p.fields.Load(); f != nil {
		return *f
	}
	f := FilterFields(p.info)
	p.fields.Store(&f)
	return f
}
