package tracepoint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/uebpf/uebpf"
)

// SectionPrefix starts the ELF section of a program for a tracepoint:
// "uebpf/tracepoint/<provider>/<name>".
const SectionPrefix = "uebpf/tracepoint/"

// AttachCollection attaches every program of coll whose section is
// "uebpf/tracepoint/<provider>/<name>" to the registered tracepoint of that
// name, with opts (WithThreadID ...), and returns one Link closing them
// all. A section naming an unknown tracepoint is an error and attaches
// nothing. The collection must stay open while the link exists.
func AttachCollection(coll *uebpf.Collection, opts ...Option) (Link, error) {
	var links multiLink
	for _, name := range slices.Sorted(maps.Keys(coll.Programs)) {
		prog := coll.Programs[name]
		rest, ok := strings.CutPrefix(prog.Section(), SectionPrefix)
		if !ok {
			continue
		}
		provider, tpName, ok := strings.Cut(rest, "/")
		if !ok {
			links.Close()
			return nil, fmt.Errorf("tracepoint: program %s: section %q: want %s<provider>/<name>", name, prog.Section(), SectionPrefix)
		}
		p, err := Lookup(provider + ":" + tpName)
		if err != nil {
			links.Close()
			return nil, fmt.Errorf("tracepoint: program %s (section %s): %w", name, prog.Section(), err)
		}
		a, err := Attach(p, append(slices.Clip(opts), Program(prog))...)
		if err != nil {
			links.Close()
			return nil, fmt.Errorf("tracepoint: program %s: %w", name, err)
		}
		links = append(links, a)
	}
	return links, nil
}

// multiLink closes several links as one.
type multiLink []Link

func (m multiLink) Close() error {
	var errs []error
	for _, l := range m {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}
