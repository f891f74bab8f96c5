// Package kbridge makes kernel eBPF maps look like maps of package maps, so
// that programs running in uebpf's VM share state with programs running in
// the Linux kernel through the same helper calls, and Go code uses the same
// Go-side API. It is built on cilium/ebpf, which does the syscalls, BTF and
// the ring buffer reader.
//
// # Opening kernel maps
//
// Open wraps a *ebpf.Map; OpenPinned, OpenID and OpenFD find one by pin
// path, ID or file descriptor; FromCollection opens every map of a loaded
// cilium/ebpf Collection (each Map holds its own clone). Every Map owns its
// *ebpf.Map: Close closes it.
//
// Mixed objects (kernel and userspace programs in one object) are loaded by
// the root package's Options.Kernel: it creates the kernel side with
// cilium/ebpf (forcing BPF_F_MMAPABLE on arrays), opens its maps with
// FromCollection, and hands them to package elf as MapReplacements, so the
// VM programs are bound to the kernel's maps.
//
// # Mmapped arrays: shared memory
//
// Arrays created with BPF_F_MMAPABLE become an *Array: the kernel map's
// memory is mmapped once and an array of package maps is built on it
// (maps.NewArrayOn) without copying. Values are where the kernel keeps
// them, at a stride of ValueSize rounded up to 8, so
//
//   - a VM program's loads and stores are plain memory accesses, no syscall;
//   - atomic instructions from VM programs and kernel programs act on the
//     same words and no update is lost;
//   - pointers returned by bpf_map_lookup_elem point into the mapping, and
//     writes through them are seen by the kernel at once.
//
// Lifetime: the mapping's address is fixed for as long as the Array is
// reachable. Close replaces the kernel's pages by private zero pages at the
// same address and closes the file descriptor, so the kernel map is
// released at once while a program that still holds the Array keeps
// running on harmless memory instead of faulting; the address range is
// unmapped when the Array is garbage collected, which happens only after
// every vm.Program referring to it is gone (a Program holds its maps). A map
// the kernel only lets us map read-only (frozen, or BPF_F_RDONLY_PROG) is
// reported as BPF_F_RDONLY_PROG and frozen on the Go side.
//
// # Other maps: copy semantics
//
// Hash, LRU hash, LPM trie, per-CPU maps and arrays without BPF_F_MMAPABLE
// become a *SyscallMap: every access is one bpf() syscall (about a
// microsecond). Its values are copies:
//
//   - LookupElem (bpf_map_lookup_elem in a program) returns a pointer to a
//     fresh copy of the value, allocated for that call. It never changes
//     and stays valid while anything (the run's region list) refers to it.
//   - A write through that pointer could not reach the kernel, so it is
//     refused instead of silently lost: SyscallMap reports LookupCopies,
//     the standard helpers then hand copies to programs read-only, and a
//     store or atomic to a copy ends the run with a *vm.RunError naming the
//     pc. Programs write with bpf_map_update_elem (and delete with
//     bpf_map_delete_elem), which are syscalls.
//   - Read-modify-write through the syscall path is not atomic against
//     kernel programs or other writers; keep counters shared with the kernel
//     in mmapped arrays.
//   - The Go side (Lookup, Update, ...) uses cilium/ebpf's encoding of Go
//     values, which is the encoding package maps uses. Iterate walks a
//     snapshot taken when it is called; Kernel().Iterate() walks the map live.
//
// Errors wrap the sentinels of package maps (maps.ErrKeyNotExist, ...) and
// the original cilium/ebpf error, and name the map; maps.Errno turns the
// raw API's errors into a helper's return value.
//
// # Ring buffers
//
// Kernel → user: RingReader consumes a BPF_MAP_TYPE_RINGBUF in batches
// (ReadBatch waits for one record, then drains what is there without
// waiting) and reports a drop counter that kernel programs maintain (the
// kernel itself counts nothing). User → kernel: UserRingBuf produces into a
// BPF_MAP_TYPE_USER_RINGBUF (Reserve/Submit/Discard, or Write), which
// kernel programs drain with bpf_user_ringbuf_drain.
//
// # BTF
//
// CheckMap compares the key and value types a kernel map was created with
// against the types the userspace side expects, when both have BTF, and
// names the first field that differs (ErrBTFMismatch).
package kbridge
