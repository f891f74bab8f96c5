package helpers_test

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/helpers"
)

// The clocks and thread ids are Linux's (sys_linux.go); elsewhere they
// are the nearest the system has.

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
