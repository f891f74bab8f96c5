package tracker_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tracker "github.com/uebpf/uebpf/examples/latency-tracker"
)

func TestSyscallName(t *testing.T) {
	for nr, want := range map[uint32]string{0: "read", 1: "write", 35: "nanosleep", 110: "getppid", 230: "clock_nanosleep", 511: "syscall_511"} {
		if got := tracker.SyscallName(nr); got != want {
			t.Errorf("SyscallName(%d) = %q, want %q", nr, got, want)
		}
	}
}

// The committed table matches the header it was generated from, where the
// header is installed.
func TestSyscallTableCurrent(t *testing.T) {
	const header = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
	b, err := os.ReadFile(header)
	if err != nil {
		t.Skipf("%s not installed", header)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "#define" || !strings.HasPrefix(f[1], "__NR_") {
			continue
		}
		var nr uint32
		if _, err := fmt.Sscan(f[2], &nr); err != nil {
			continue
		}
		if got, want := tracker.SyscallName(nr), strings.TrimPrefix(f[1], "__NR_"); got != want {
			t.Errorf("syscall %d: table says %q, %s says %q: run go generate", nr, got, header, want)
		}
		n++
	}
	if n < 300 {
		t.Errorf("only %d syscalls in %s", n, header)
	}
}

func TestPercentile(t *testing.T) {
	var s tracker.Stats
	s.Buckets[3] = 50  // [8, 16)
	s.Buckets[10] = 49 // [1024, 2048)
	s.Buckets[20] = 1  // [1Mi, 2Mi)
	tests := []struct {
		p    float64
		want time.Duration
	}{{1, 15}, {50, 15}, {51, 2047}, {99, 2047}, {99.5, 1<<21 - 1}, {100, 1<<21 - 1}}
	for _, tt := range tests {
		if got := s.Percentile(tt.p); got != tt.want {
			t.Errorf("p%v = %d, want %d", tt.p, got, tt.want)
		}
	}
	var empty tracker.Stats
	if got := empty.Percentile(99); got != 0 {
		t.Errorf("empty histogram: p99 = %v", got)
	}
}

func TestWriteHistogram(t *testing.T) {
	var s tracker.Stats
	s.Buckets[0] = 1
	s.Buckets[2] = 4
	var b strings.Builder
	tracker.WriteHistogram(&b, "read", &s)
	want := `
syscall = read
                   nsecs : count     distribution
         0 -> 1           : 1         |**********                              |
         2 -> 3           : 0         |                                        |
         4 -> 7           : 4         |****************************************|
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	tracker.WriteHistogram(&b, "none", &tracker.Stats{})
	if b.Len() != 0 {
		t.Errorf("empty histogram printed %q", b.String())
	}
}
