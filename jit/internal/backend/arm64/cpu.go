package arm64

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/uebpf/uebpf/jit/internal/backend"
)

// hasLSE reports whether atomics may use the ARMv8.1 LSE instructions.
func hasLSE(opts *backend.Options) bool {
	return cpuid.CPU.Supports(cpuid.ATOMICS) && !opts.ARM64.ForceLLSC
}
