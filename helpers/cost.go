package helpers

// What helpers charge to the run's budget (vm.Env.Charge) for their work
// beyond the call itself, so that the budget bounds the time a run takes
// whatever it calls: a unit is about the time of one interpreted
// instruction (a nanosecond or two). Without these charges a loop of
// system calls ran for minutes on the default budget.
const (
	costClock    = 16  // a clock read through the vDSO
	costSyscall  = 512 // a system call
	costFormat   = 64  // a printf-style call, besides its output
	costCallback = 16  // a bpf_loop iteration, besides the callback's instructions
)

// costCopy is the charge for copying or scanning n bytes.
func costCopy(n uint64) uint64 { return n / 8 }

// costRender is the charge for formatting n bytes of output.
func costRender(n uint64) uint64 { return n / 2 }
