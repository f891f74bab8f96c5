package helpers

import (
	"errors"

	"github.com/uebpf/uebpf/vm"
)

// maxLoops is BPF_MAX_LOOPS, the most iterations bpf_loop makes.
const maxLoops = 1 << 23

// loop is bpf_loop(nr_loops, callback, callback_ctx, flags): it calls
// callback(i, callback_ctx) for i = 0, 1, ... up to nr_loops times and
// stops early when the callback returns non-zero. It returns the number of
// callback calls made, -EINVAL for non-zero flags or something that is not
// a function of the program, -E2BIG for more than 1<<23 iterations.
//
// Callbacks count against the run's instruction budget and call depth. A
// callback that faults or runs out of budget ends the run with its error;
// one that stops the run (a helper calling Env.Stop) ends the loop.
func loop(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
	if r4 != 0 {
		return retEINVAL
	}
	n := uint32(r1) // u32 in Linux
	if n > maxLoops {
		return retE2BIG
	}
	for i := range n {
		if !env.Charge(costCallback) {
			return uint64(i)
		}
		ret, err := env.CallFunction(r2, [5]uint64{uint64(i), r3})
		if err != nil {
			if i == 0 && errors.Is(err, vm.ErrInvalidCallback) {
				return retEINVAL
			}
			env.Fail(err)
			return uint64(i)
		}
		if ret != 0 || env.HelperStatus() {
			return uint64(i) + 1
		}
	}
	return uint64(n)
}
