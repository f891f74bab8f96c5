package filter

import _ "embed"

// Object is filter.bpf.o, for programs that load it without a file path.
//
//go:embed filter.bpf.o
var Object []byte
