//go:build linux

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

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		u    tracker.Unit
		want string
	}{
		{0, tracker.Auto, "0ns"},
		{127, tracker.Auto, "127ns"},
		{6100, tracker.Auto, "6.10µs"},
		{40_123_000, tracker.Auto, "40.1ms"},
		{262_143_000, tracker.Auto, "262ms"},
		{1_500_000_000, tracker.Auto, "1.50s"},
		{-2000, tracker.Auto, "-2.00µs"},
		{40_100_000, tracker.Microseconds, "40100.0"},
		{40_100_000, tracker.Milliseconds, "40.100"},
		{1234, tracker.Nanoseconds, "1234"},
	}
	for _, tt := range tests {
		if got := tracker.FormatDuration(tt.d, tt.u); got != tt.want {
			t.Errorf("FormatDuration(%d, %d) = %q, want %q", tt.d, tt.u, got, tt.want)
		}
	}
	if got := tracker.FormatRange(1<<24, 1<<25-1, tracker.Auto); got != "16.8ms-33.6ms" {
		t.Errorf("FormatRange = %q", got)
	}
}

func TestPercentileRange(t *testing.T) {
	var s tracker.Stats
	s.Buckets[0] = 1  // [0, 1]
	s.Buckets[24] = 9 // [16.8ms, 33.6ms)
	for _, tt := range []struct {
		p      float64
		lo, hi time.Duration
	}{{10, 0, 1}, {50, 1 << 24, 1<<25 - 1}, {100, 1 << 24, 1<<25 - 1}} {
		if lo, hi := s.PercentileRange(tt.p); lo != tt.lo || hi != tt.hi {
			t.Errorf("p%v: [%d, %d], want [%d, %d]", tt.p, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestErrnoName(t *testing.T) {
	for ret, want := range map[int64]string{0: "", 5: "", -2: "ENOENT", -4: "EINTR", -512: "ERESTARTSYS", -516: "ERESTART_RESTARTBLOCK", -4095: "E4095", -5000: ""} {
		if got := tracker.ErrnoName(ret); got != want {
			t.Errorf("ErrnoName(%d) = %q, want %q", ret, got, want)
		}
	}
}

func TestFormatReturn(t *testing.T) {
	const sysMmap, sysBrk = 9, 12
	for _, tt := range []struct {
		nr   uint32
		ret  int64
		want string
	}{
		{sysRead, 5, "5"},
		{sysRead, -11, "-1 EAGAIN"},
		{sysGetppid, 20731, "20731"},
		{sysMmap, 0x7f3a2c5e1000, "0x7f3a2c5e1000"},
		{sysMmap, -12, "-1 ENOMEM"},
		{sysBrk, 0x55d4a4b2f000, "0x55d4a4b2f000"},
	} {
		if got := tracker.FormatReturn(tt.nr, tt.ret); got != tt.want {
			t.Errorf("FormatReturn(%s, %d) = %q, want %q", tracker.SyscallName(tt.nr), tt.ret, got, tt.want)
		}
	}
	if got := tracker.FormatEvent(tracker.Event{Syscall: sysMmap, Return: 0x7f3a2c5e1000}); !strings.HasSuffix(got, " 0x7f3a2c5e1000") {
		t.Errorf("mmap event printed as %q: want its return in hex", got)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 slow calls", 1: "1 slow call", 2: "2 slow calls"} {
		if got := tracker.Plural(n, "slow call"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
