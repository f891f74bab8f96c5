// Package maps implements eBPF maps in userspace, with the kernel's
// semantics and memory layout, for programs run by uebpf's interpreter and
// JIT and for the Go code around them.
//
// It is the lowest layer of uebpf and imports no other uebpf package.
// Helpers (package helpers) call the raw-pointer API while a program runs;
// applications use the Go-side API, modelled on cilium/ebpf's *ebpf.Map;
// kbridge can back array maps with the mmap of a kernel map (NewArrayOn).
//
// # Types
//
// New creates, after validating the spec like BPF_MAP_CREATE:
// Array, PerCPUArray, Hash, PerCPUHash, LRUHash, LRUCPUHash, LPMTrie,
// Queue, Stack, RingBuf and ProgramArray. Every map implements Map; queues
// and stacks also QueueMap, arrays MemoryMap, ring buffers RingBufMap
// (consumed with a Reader), program arrays ProgArrayMap.
//
// # Layout
//
// Values are 8-byte aligned and padded to a multiple of 8 bytes, so eBPF
// atomic instructions on them are real atomics. An array is one block with
// element i at i*round_up(ValueSize, 8) (Memory), as in the kernel and in the
// mmap of a BPF_F_MMAPABLE array. Per-CPU maps hold one value slot per
// possible CPU (PossibleCPUs); the Go side sees them in the bpf(2) layout.
// Ring buffers keep the kernel's consumer page / producer page / data layout
// and record headers.
//
// # Errors
//
// Errors wrap sentinel errors (ErrKeyNotExist, ErrKeyExist, ErrMapFull,
// ErrInvalid ...) and name the map. Each sentinel also matches the errno
// Linux returns for the same condition (errors.Is(err, unix.ENOENT)), and
// Errno gives the negative errno a helper returns to the program. The
// raw-pointer API returns errors preallocated per map, so failing calls do
// not allocate either.
//
// # Go-side encoding
//
// Keys and values are []byte of the exact size, unsafe.Pointer,
// encoding.BinaryMarshaler/BinaryUnmarshaler, or fixed-size values as
// encoding/binary defines them (native byte order); see encoding.go. Per-CPU
// values are slices with one element per possible CPU. Queues and stacks use
// a nil key: Update pushes, Lookup peeks, LookupAndDelete pops.
//
// # Concurrency
//
// Every map is safe for any mix of concurrent program-side and Go-side
// calls.
//
//   - Arrays take no locks at all. Program-side updates are a plain memcpy,
//     like the kernel's; Go-side reads and writes copy 8-byte words
//     atomically, so a counter that programs update with atomic
//     instructions is never torn.
//   - Hash maps (all four kinds) are open-addressed tables whose slots are
//     the elements (control word, key, value), so a lookup of a small key
//     usually touches one cache line, the one the program then reads the
//     value from. Tables of up to 4 MiB have twice as many slots as
//     MaxEntries (rounded up to a power of two), larger ones a third more,
//     which keeps their footprint, and so their cache misses, down.
//     Lookups take no lock: they read a slot's control word,
//     compare the key with atomic loads and read the control word again; a
//     generation in it changes whenever the slot is deleted or reused, so a
//     reader never accepts a key torn by a concurrent writer. Writers lock a
//     stripe of 1024 padded spin locks chosen by the key's home slot, and
//     inserts claim free slots with a compare-and-swap. Elements never move;
//     values of existing keys are updated in place (as with BPF_F_LOCK in
//     the kernel), so a pointer a program holds keeps seeing the live value.
//     Go-side lookups copy the value under the key's lock, so they never
//     return the value of a reused slot. See hash.go and lru.go.
//   - The LPM trie looks up without locking under a sequence counter
//     (retrying if a writer changed the trie's shape); writers take a mutex.
//   - Queues and stacks use one mutex. Ring buffer producers take one spin
//     lock to reserve, commit or write a record, released with a plain
//     store on amd64 (a release there), and publish records with release
//     stores of the positions and headers, so that a record written by
//     RingBufMap.Write, or in place by a RingProducer (Begin, Commit),
//     costs one locked instruction. With no fence on that
//     path, producers decide whether to wake the reader under the lock,
//     and a reader makes its last check before sleeping under it too, so
//     that no wakeup is lost.
//   - Program arrays are slots read with one atomic load.
//
// # Lifetime of value pointers
//
// LookupElem returns a pointer into storage the map owns: slabs of []uint64
// allocated when the map is created (or, for BPF_F_NO_PREALLOC and very
// large maps, as it fills) and never released while the map is reachable.
// On Linux, hash maps of 4 MiB and more take their slots from one anonymous
// mapping with transparent huge pages instead (a lookup in a large map
// otherwise misses the TLB on almost every call), unmapped only once the
// map is garbage.
// The pointer therefore stays valid memory even if another goroutine deletes
// the element while the program runs. Deleted hash, LRU and trie elements
// are recycled for later inserts, exactly like the kernel's preallocated hash
// maps: a program that keeps using a pointer after its element was deleted
// may see (and write) the value of a different key that reused the slot. Go's
// garbage collector does not see addresses held in eBPF registers, so
// whoever runs a program keeps the maps it uses reachable for the run.
//
// Read-only and write-only flags: BPF_F_RDONLY_PROG / BPF_F_WRONLY_PROG are
// reported by ReadOnlyProg/WriteOnlyProg for the verifier and helpers to
// enforce; BPF_F_RDONLY / BPF_F_WRONLY and Freeze are enforced on the Go side.
package maps
