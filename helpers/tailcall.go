package helpers

import (
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

var retELOOP = errno(unix.ELOOP)

// tailCall is bpf_tail_call(ctx, prog_array, index): when the slot holds a
// *vm.Program, the run continues in it with the same context and does not
// come back. Otherwise the call fails and the program goes on with the next
// instruction, as in Linux, with r0 telling why (Linux leaves r0
// undefined): -EINVAL for a map that is not a program array, -ENOENT for an
// index out of range or an empty slot, -ELOOP once the run has made
// vm.MaxTailCalls (33) tail calls.
func tailCall(env *vm.Env, _, r2, r3, _, _ uint64) uint64 {
	v, ok := env.Map(r2)
	if !ok {
		return retEINVAL
	}
	a, ok := v.(maps.ProgArrayMap)
	if !ok {
		return retEINVAL
	}
	p, _ := a.Program(uint32(r3)).(*vm.Program) // the index is a u32 in Linux
	if p == nil {
		return retENOENT
	}
	if !env.TailCall(p) {
		return retELOOP
	}
	return 0
}
