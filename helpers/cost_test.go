package helpers_test

import (
	"errors"
	"testing"
	"time"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// Helpers that do more than a plain call charge their work to the budget,
// so that it bounds a run's time: each costs more than its instruction,
// and the byte-counting ones more for more bytes.
func TestHelperCosts(t *testing.T) {
	// A string on the stack, a buffer below it, r2 = a size.
	const prologue = `
		stdw [%r10-8], 0x4141
		mov %r1, %r10
		add %r1, -512
		mov %r3, %r10
		add %r3, -8
		mov %r4, 0
		mov %r5, 0
	`
	// charge returns what the call costs beyond its slot.
	charge := func(call string, size int) uint64 {
		t.Helper()
		executed := func(src string) uint64 {
			insns, err := asm.Assemble("mov %r2, " + itoa(size) + "\n" + prologue + src + "\nexit")
			if err != nil {
				t.Fatal(err)
			}
			e := vm.NewEnv()
			if _, err := loadInsns(t, insns, nil).Exec(e); err != nil {
				t.Fatal(err)
			}
			return e.Executed()
		}
		return executed(call) - executed("mov %r0, 0")
	}
	for _, tc := range []struct {
		name  string
		call  int
		bytes bool
	}{
		{"ktime_get_ns", 5, false},
		{"ktime_get_boot_ns", 125, false},
		{"probe_read_user", 112, true},
		{"snprintf", 165, false},
		{"strncmp", 182, true},
	} {
		small, large := charge("call "+itoa(tc.call), 8), charge("call "+itoa(tc.call), 256)
		if small == 0 {
			t.Errorf("%s: charges nothing", tc.name)
		}
		if tc.bytes && large <= small {
			t.Errorf("%s: 256 bytes charged %d, 8 bytes %d", tc.name, large, small)
		}
	}
}

// On the default budget, a loop of the costliest helpers ends within
// about the time the default budget promises (DefaultTimeout bounds it
// in any case).
func TestHelperLoopEnds(t *testing.T) {
	p := load(t, "call 125\nja -2\nexit", nil)
	start := time.Now()
	_, err := p.Run(nil)
	if !errors.Is(err, vm.ErrBudgetExceeded) && !errors.Is(err, vm.ErrTimeout) {
		t.Fatalf("%v, want the budget's or the time limit's end", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a loop of ktime_get_boot_ns ran %v", took)
	}
}
