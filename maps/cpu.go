package maps

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

var possibleCPUs = sync.OnceValue(func() int {
	n, err := parsePossibleCPUs("/sys/devices/system/cpu/possible")
	if err != nil || n < 1 {
		return runtime.NumCPU()
	}
	return n
})

// PossibleCPUs returns the number of possible CPUs, the number of value slots
// of a per-CPU map. It reads /sys/devices/system/cpu/possible like the kernel
// and cilium/ebpf do, and falls back to runtime.NumCPU when it cannot.
func PossibleCPUs() int { return possibleCPUs() }

// parsePossibleCPUs parses a CPU list such as "0-3" or "0,2-5" and returns the
// highest CPU number plus one.
func parsePossibleCPUs(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseCPUList(string(b))
}

func parseCPUList(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty CPU list")
	}
	highest := -1
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || l < 0 || h < l {
			return 0, errors.New("malformed CPU list " + strconv.Quote(s))
		}
		highest = max(highest, h)
	}
	return highest + 1, nil
}
