package jit

import (
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/jit/internal/backend"
	"github.com/uebpf/uebpf/vm"
)

// Generated code reads Env fields at engine.*Offset from the state: they
// must land on what the Env's setters set.
func TestEnvOffsets(t *testing.T) {
	e := vm.NewEnv()
	ctx := make([]byte, 24)
	pkt := make([]byte, 7)
	e.SetContext(ctx)
	e.SetArg(4, 0x5555)
	e.SetPacket(pkt)
	s := unsafe.Pointer(stateOf(e))
	word := func(off int32) uint64 { return *(*uint64)(unsafe.Add(s, off)) }
	first, n := unsafe.Pointer(unsafe.SliceData(envOf(e).Regions)), len(envOf(e).Regions)
	for _, tc := range []struct {
		name string
		off  int32
		want uint64
	}{
		{"r1", backend.OffArgs, uint64(uintptr(unsafe.Pointer(&ctx[0])))},
		{"r2", backend.OffArgs + 8, 24},
		{"r5", backend.OffArgs + 32, 0x5555},
		{"stack", backend.OffStackLo, envOf(e).StackLo},
		{"regions", backend.OffRegions, uint64(uintptr(first))},
		{"regions length", backend.OffNRegions, uint64(n)},
		{"packet", backend.OffPktPtr, uint64(uintptr(unsafe.Pointer(&pkt[0])))},
		{"packet length", backend.OffPktLen, 7},
	} {
		if got := word(tc.off); got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// TestReasonPC checks the pc carried in a reason, and the fallback to
// exitPC for pcs that do not fit.
func TestReasonPC(t *testing.T) {
	for _, tc := range []struct {
		reason, exitPC uint64
		want           int
	}{
		{backend.ReasonBudget, 99, 0},
		{7<<8 | backend.ReasonBudget, 99, 7},
		{(backend.PCInExitPC-1)<<8 | backend.ReasonCallDepth, 99, backend.PCInExitPC - 1},
		{backend.PCInExitPC<<8 | backend.ReasonBudget, 1 << 30, 1 << 30},
	} {
		if got := reasonPC(tc.reason, tc.exitPC); got != tc.want {
			t.Errorf("reason %#x, exitPC %d: pc %d, want %d", tc.reason, tc.exitPC, got, tc.want)
		}
	}
}
