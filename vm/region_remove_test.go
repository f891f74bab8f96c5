package vm_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/vm"
)

// TestRemoveRegion: memory a helper takes back is no longer accessible,
// whatever region the last access used, and a give/take loop keeps the
// region list short.
func TestRemoveRegion(t *testing.T) {
	var bufs [4][64]byte
	next := 0
	maxRegions := 0
	helpers := vm.Helpers{
		1: {Name: "give", Func: func(env *vm.Env, _, _, _, _, _ uint64) uint64 {
			p := unsafe.Pointer(&bufs[next%len(bufs)])
			next++
			env.AddRegion(p, 64, true)
			return uint64(uintptr(p))
		}},
		2: {Name: "take", Func: func(env *vm.Env, r1, _, _, _, _ uint64) uint64 {
			n := env.RemoveRegion(*(*unsafe.Pointer)(unsafe.Pointer(&r1)), 1)
			l := len(engine.EnvOf(unsafe.Pointer(env)).Regions)
			maxRegions = max(maxRegions, l)
			return uint64(n)
		}},
	}
	tests := []struct {
		name    string
		src     string
		want    uint64
		wantErr error
	}{
		{"write after take", "call 1\nmov %r6, %r0\nstdw [%r6+0], 1\nmov %r1, %r6\ncall 2\nstdw [%r6+8], 2\nexit", 0, vm.ErrMemoryAccess},
		{"read after take", "call 1\nmov %r6, %r0\nldxdw %r7, [%r6+0]\nmov %r1, %r6\ncall 2\nldxdw %r0, [%r6+0]\nexit", 0, vm.ErrMemoryAccess},
		{"other regions stay", "call 1\nmov %r6, %r0\ncall 1\nmov %r7, %r0\nmov %r1, %r6\ncall 2\nstdw [%r7+0], 3\nldxdw %r0, [%r7+0]\nexit", 3, nil},
		{"take returns the count", "call 1\nmov %r1, %r0\nadd %r1, 63\ncall 2\nexit", 1, nil},
		{"take of nothing", "mov %r1, %r10\nadd %r1, -8\ncall 2\nexit", 0, nil},
		{"loop", `
			mov %r8, 0
		loop:
			call 1
			mov %r6, %r0
			stdw [%r6+0], 1
			mov %r1, %r6
			call 2
			add %r8, 1
			jlt %r8, 1000, loop
			mov %r0, 0
			exit`, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			maxRegions = 0
			env := vm.NewEnv()
			var ctx [8]byte
			env.SetContext(ctx[:]) // a region the run starts with
			got, err := mustLoad(t, tc.src, helpers).Exec(env)
			if tc.wantErr != nil {
				var re *vm.RunError
				if !errors.As(err, &re) || !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want a *vm.RunError wrapping %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("r0 = %d, %v; want %d", got, err, tc.want)
			}
			if maxRegions > 3 {
				t.Errorf("the region list grew to %d", maxRegions)
			}
		})
	}
}
