package amd64

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/uebpf/uebpf/jit/internal/backend"
)

// hostFeatures returns what the CPU offers, minus what opts turn off.
func hostFeatures(opts *backend.Options) features {
	return features{
		bmi2:  cpuid.CPU.Supports(cpuid.BMI2) && !opts.AMD64.DisableBMI2,
		movbe: cpuid.CPU.Supports(cpuid.MOVBE) && !opts.AMD64.DisableMOVBE,
	}
}
