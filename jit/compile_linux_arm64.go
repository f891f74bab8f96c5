package jit

import "github.com/uebpf/uebpf/jit/internal/backend/arm64"

// arch is the back end of this architecture.
var arch = arm64.Arch
