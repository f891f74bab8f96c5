package jit

import "github.com/klauspost/cpuid/v2"

// hostFeatures returns what the CPU offers, minus what opts turn off.
func hostFeatures(opts *Options) features {
	return features{
		bmi2:  cpuid.CPU.Supports(cpuid.BMI2) && !opts.DisableBMI2,
		movbe: cpuid.CPU.Supports(cpuid.MOVBE) && !opts.DisableMOVBE,
	}
}
