package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/uebpf/uebpf/internal/conformance"
)

// engines are the execution engines the commands can use, by name.
var engines = map[string]conformance.Engine{
	"interpreter": conformance.Interpreter,
}

func engineNames() string {
	var names []string
	for name := range engines {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func lookupEngine(name string) (conformance.Engine, error) {
	e, ok := engines[name]
	if !ok {
		return nil, usageError(fmt.Sprintf("unknown engine %q (have %s)", name, engineNames()))
	}
	return e, nil
}
