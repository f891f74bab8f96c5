package helpers

import "github.com/uebpf/uebpf/vm"

// bpf_probe_read_user and bpf_probe_read_user_str read any address of the
// process without trusting it: an unmapped address makes them fail with
// -EFAULT and zero the destination, as in Linux. A process has one address
// space, so the compat bpf_probe_read and bpf_probe_read_str (which in
// Linux read kernel or user memory) are the same functions.

// probeReadUser is bpf_probe_read_user(dst, size, unsafe_ptr).
func probeReadUser(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
	size := uint64(uint32(r2)) // u32 in Linux
	if size == 0 {
		return 0
	}
	dst, ok := env.Bytes(r1, size, true)
	if !ok {
		return retEFAULT
	}
	env.Charge(costSyscall + costCopy(size))
	if !readMem(env, dst, r3) {
		clear(dst)
		return retEFAULT
	}
	return 0
}

// probeReadUserStr is bpf_probe_read_user_str(dst, size, unsafe_ptr): it
// returns the length of the string copied including its NUL (size when it
// was truncated), or -EFAULT with dst zeroed.
func probeReadUserStr(env *vm.Env, r1, r2, r3, _, _ uint64) uint64 {
	size := uint64(uint32(r2)) // u32 in Linux
	if size == 0 {
		return 0
	}
	dst, ok := env.Bytes(r1, size, true)
	if !ok {
		return retEFAULT
	}
	env.Charge(costSyscall + costCopy(size))
	n, ok := readString(env, dst, r3)
	if !ok {
		clear(dst)
		return retEFAULT
	}
	return uint64(n)
}
