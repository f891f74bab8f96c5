package helpers

import (
	_ "unsafe" // go:linkname

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/vm"
)

// nanotime is the Go runtime's CLOCK_MONOTONIC read through the vDSO: the
// clock of the kernel's bpf_ktime_get_ns, so that times taken here and in
// kernel programs compare, at a fraction of a system call's cost. The
// runtime keeps this symbol linkable on purpose (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// clocks implements the bpf_ktime_get_*ns helpers. With an override, all
// of them read it.
type clocks struct{ override func() uint64 }

func newClocks(override func() uint64) *clocks { return &clocks{override} }

// monotonic is bpf_ktime_get_ns: CLOCK_MONOTONIC.
func (c *clocks) monotonic(env *vm.Env, _, _, _, _, _ uint64) uint64 {
	env.Charge(costClock)
	if c.override != nil {
		return c.override()
	}
	return uint64(nanotime())
}

// boot is bpf_ktime_get_boot_ns: CLOCK_BOOTTIME, which also counts time
// spent suspended.
func (c *clocks) boot(env *vm.Env, _, _, _, _, _ uint64) uint64 {
	return c.read(env, clockBoottime)
}

// coarse is bpf_ktime_get_coarse_ns: CLOCK_MONOTONIC_COARSE.
func (c *clocks) coarse(env *vm.Env, _, _, _, _, _ uint64) uint64 {
	return c.read(env, clockMonotonicCoarse)
}

// tai is bpf_ktime_get_tai_ns: CLOCK_TAI.
func (c *clocks) tai(env *vm.Env, _, _, _, _, _ uint64) uint64 {
	return c.read(env, clockTAI)
}

// read reads a clock that the Go runtime does not expose. x/sys/unix makes
// a real system call (no vDSO), which is what these rarer clocks cost.
func (c *clocks) read(env *vm.Env, id int32) uint64 {
	env.Charge(costSyscall)
	if c.override != nil {
		return c.override()
	}
	var ts unix.Timespec
	if unix.ClockGettime(id, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano())
}
