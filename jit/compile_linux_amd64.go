package jit

import "github.com/uebpf/uebpf/jit/internal/backend/amd64"

// arch is the back end of this architecture.
var arch = amd64.Arch
