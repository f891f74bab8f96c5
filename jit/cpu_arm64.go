package jit

import "github.com/klauspost/cpuid/v2"

// hasLSE reports whether atomics may use the ARMv8.1 LSE instructions.
func hasLSE(opts *Options) bool {
	return cpuid.CPU.Supports(cpuid.ATOMICS) && !opts.ForceLLSC
}
