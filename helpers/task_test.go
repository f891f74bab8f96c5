package helpers_test

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/helpers"
)

func callNoArgs(t *testing.T, num int, cfg *helpers.Config) uint64 {
	t.Helper()
	return run(t, load(t, "call "+itoa(num)+"\nexit", helpers.Standard(cfg)), nil)
}

func clock(t *testing.T, id int32) uint64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

func TestKtime(t *testing.T) {
	for _, tc := range []struct {
		num   int
		clock int32
		slack uint64 // the coarse clock lags by up to a tick
	}{
		{helpers.KtimeGetNs, unix.CLOCK_MONOTONIC, 0},
		{helpers.KtimeGetBootNs, unix.CLOCK_BOOTTIME, 0},
		{helpers.KtimeGetCoarseNs, unix.CLOCK_MONOTONIC_COARSE, 0},
		{helpers.KtimeGetTaiNs, unix.CLOCK_TAI, 0},
	} {
		before := clock(t, tc.clock)
		got := callNoArgs(t, tc.num, nil)
		after := clock(t, tc.clock)
		if got < before || got > after {
			t.Errorf("helper %d: %d not in [%d, %d] of clock %d", tc.num, got, before, after, tc.clock)
		}
	}
	cfg := &helpers.Config{Clock: func() uint64 { return 12345 }}
	for _, num := range []int{helpers.KtimeGetNs, helpers.KtimeGetBootNs, helpers.KtimeGetCoarseNs, helpers.KtimeGetTaiNs} {
		if got := callNoArgs(t, num, cfg); got != 12345 {
			t.Errorf("helper %d with Config.Clock: %d", num, got)
		}
	}
}

func TestGetPrandomU32(t *testing.T) {
	if got := callNoArgs(t, helpers.GetPrandomU32, &helpers.Config{Rand: func() uint32 { return 7 }}); got != 7 {
		t.Errorf("with Config.Rand: %d", got)
	}
	p := load(t, "call 7\nexit", nil)
	seen := map[uint64]bool{}
	for range 64 {
		v := run(t, p, nil)
		if v>>32 != 0 {
			t.Fatalf("%#x is not a u32", v)
		}
		seen[v] = true
	}
	if len(seen) < 60 {
		t.Errorf("%d distinct values out of 64", len(seen))
	}
}

func TestCurrentTask(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pt := callNoArgs(t, helpers.GetCurrentPidTgid, nil)
	if tgid, tid := int(pt>>32), int(uint32(pt)); tgid != os.Getpid() || tid != unix.Gettid() {
		t.Errorf("pid_tgid: tgid %d tid %d, want %d %d", tgid, tid, os.Getpid(), unix.Gettid())
	}
	ug := callNoArgs(t, helpers.GetCurrentUidGid, nil)
	if gid, uid := int(ug>>32), int(uint32(ug)); gid != os.Getgid() || uid != os.Getuid() {
		t.Errorf("uid_gid: gid %d uid %d, want %d %d", gid, uid, os.Getgid(), os.Getuid())
	}
	if got := callNoArgs(t, helpers.GetNumaNodeID, nil); got != 0 {
		t.Errorf("numa node %d", got)
	}
	if got := callNoArgs(t, helpers.GetSmpProcessorID, nil); got >= uint64(runtime.NumCPU()) {
		t.Errorf("processor id %d of %d", got, runtime.NumCPU())
	}
}

func TestGetCurrentComm(t *testing.T) {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip(err)
	}
	name := bytes.TrimSuffix(b, []byte("\n"))
	// get_current_comm(ctx, size); the context is prefilled with 0xff.
	p := load(t, "mov %r2, %r2\ncall 16\nexit", nil)
	for _, size := range []int{1, 4, 16, 32} {
		ctx := bytes.Repeat([]byte{0xff}, size)
		if r0 := run(t, p, ctx); r0 != 0 {
			t.Errorf("size %d: r0 = %#x", size, r0)
		}
		want := make([]byte, size)
		copy(want[:size-1], name)
		if !bytes.Equal(ctx, want) {
			t.Errorf("size %d: %q, want %q", size, ctx, want)
		}
	}
	if r0 := run(t, load(t, "mov %r1, 8\nmov %r2, 16\ncall 16\nexit", nil), nil); r0 != neg(14) {
		t.Errorf("bad buffer: %#x, want -EFAULT", r0)
	}
	if r0 := run(t, load(t, "mov %r1, %r10\nadd %r1, -8\nmov %r2, 0\ncall 16\nexit", nil), nil); r0 != neg(22) {
		t.Errorf("size 0: %#x, want -EINVAL", r0)
	}
}
