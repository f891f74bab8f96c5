package clock

import (
	"os"
	"runtime"
	"strings"
)

// rdtsc reads the time stamp counter.
func rdtsc() uint64

// tscUsable reports whether the kernel keeps CLOCK_MONOTONIC with the TSC.
func tscUsable() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(b)) == "tsc"
}
