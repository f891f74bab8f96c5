// Package helpers implements the standard eBPF helper functions for
// programs that uebpf runs in userspace, with Linux's helper numbers,
// prototypes and semantics wherever a userspace meaning exists, so that
// programs written against libbpf's bpf_helper_defs.h run unchanged.
//
// Standard returns the default set as a vm.Helpers to load programs with;
// Register adds an application's own helpers to a set, by convention at
// numbers from FirstApplicationHelper (0x10000) on:
//
//	set := helpers.Standard(&helpers.Config{Output: os.Stderr})
//	err := helpers.Register(set, helpers.FirstApplicationHelper, "my_helper", fn, proto)
//	prog, err := vm.Load(spec, &vm.Options{Helpers: set})
//
// # Safety
//
// Helpers never trust a program's arguments. Every pointer argument is
// checked against the memory the run may access (vm.Env.Pointer/Bytes):
// a pointer the run may not read or write makes the helper fail with
// -EFAULT (or -EINVAL, or NULL, as the helper's Linux counterpart reports
// a bad argument), never crash. Map arguments must be maps of the running
// program. Linux's verifier proves most of this before a program runs;
// without a verifier these checks are what keeps the host safe. The probe
// helpers and the %s / %pI conversions read arbitrary addresses on purpose
// and do so fault-safely (see probe_read_user).
//
// Memory a helper hands to the program (map values, ring buffer records)
// becomes a region of the run until the Env is reset; a ring buffer record
// stops being one when the program submits or discards it. A map created with
// BPF_F_RDONLY_PROG hands out read-only values and refuses update, delete,
// push and pop with -EPERM, where Linux's verifier refuses the program.
// BPF_F_WRONLY_PROG cannot be enforced on values (regions are readable):
// the verifier has to.
//
// map_lookup_elem is marked vm.Helper.ArrayLookup and HashLookup: the
// engines answer calls on array maps inline (the JIT and the interpreter),
// and calls on package maps' hash maps themselves with the map's own
// lookup, exactly as the helper would. map_update_elem is marked
// HashUpdate: the engines update package maps' hash maps themselves, and
// leave failures to the helper. Other maps (kernel maps through the
// bridge, queues ...) reach the helper.
//
// # The default set
//
//	#    name                    in userspace                                   differences from Linux
//	1    map_lookup_elem         value pointer or NULL; the value becomes a     an array's whole block becomes
//	                             region, read-only for BPF_F_RDONLY_PROG        one region, not just the value
//	2    map_update_elem         BPF_ANY/NOEXIST/EXIST, Linux's errors          -EPERM on a read-only map
//	3    map_delete_elem         Linux's errors                                 -EPERM on a read-only map
//	4    probe_read              = probe_read_user (one address space)
//	5    ktime_get_ns            CLOCK_MONOTONIC (the kernel's clock, vDSO)     Config.Clock overrides
//	6    trace_printk            ≤3 args, kernel formats, one line to           the line goes to Config.Output,
//	                             Config.Output; returns the message length      not to the trace pipe
//	7    get_prandom_u32         Config.Rand, default a lock-free PRNG
//	8    get_smp_processor_id    the Env's CPU slot (vm.Env.CPU)                a slot, not the CPU running
//	12   tail_call               continue in the *vm.Program at                 r0 on failure: -EINVAL,
//	                             prog_array[index]; else the caller goes on     -ENOENT, -ELOOP (33 reached)
//	14   get_current_pid_tgid    getpid() << 32 | gettid()                      the process's pid namespace
//	15   get_current_uid_gid     getgid() << 32 | getuid()                      the process's user namespace
//	16   get_current_comm        /proc/self/comm, read once                     thread renames not seen
//	42   get_numa_node_id        0
//	45   probe_read_str          = probe_read_user_str
//	87   map_push_elem           queues and stacks; BPF_EXIST drops the oldest  -EPERM on a read-only map
//	88   map_pop_elem            queues and stacks; empty: -ENOENT, value 0     -EPERM on a read-only map
//	89   map_peek_elem           as pop, without removing
//	112  probe_read_user         any address of the process; -EFAULT and
//	                             the destination zeroed if it is not mapped
//	114  probe_read_user_str     the same for a string: length with its NUL
//	125  ktime_get_boot_ns       CLOCK_BOOTTIME                                 a system call (no vDSO)
//	130  ringbuf_output          copy a record; -EAGAIN when full (a drop)
//	131  ringbuf_reserve         record pointer (a writable region) or NULL     NULL for size 0
//	132  ringbuf_submit          commit a record this run reserved, once        other pointers fail the run
//	133  ringbuf_discard         commit as discarded (the reader skips it)      other pointers fail the run
//	134  ringbuf_query           AVAIL_DATA, RING_SIZE, CONS_POS, PROD_POS
//	160  ktime_get_coarse_ns     CLOCK_MONOTONIC_COARSE                         a system call (no vDSO)
//	165  snprintf                kernel formats, ≤12 u64 args; size + NUL
//	177  trace_vprintk           trace_printk with ≤12 args in an array         as trace_printk
//	181  loop                    callback(i, ctx) ≤ 1<<23 times, stops on       callbacks share the run's
//	                             non-zero; returns the number of calls          budget and call depth
//	182  strncmp                 -1, 0 or 1 (Linux's strncmp)
//	195  map_lookup_percpu_elem  another CPU's slot of a per-CPU map
//	208  ktime_get_tai_ns        CLOCK_TAI                                      a system call (no vDSO)
//
// # What helpers trust
//
// Without a verifier, any byte a program can write may be hostile: its
// stack, its context, map values, ring buffer records. Helpers therefore
// take lengths, pointers and metadata only from their arguments (checked
// as above) or from Go memory no program reaches, never from bytes next
// to what the program writes. Checked for every helper of the default set:
//
//   - ringbuf_submit/discard: the ring finds the record in its own list of
//     reservations (maps.RingBufMap), not from the record header that lies
//     8 bytes before the program's memory; a forged, inner, foreign or
//     already committed pointer fails the run before any memory is
//     touched. The committed record leaves the run (vm.Env.RemoveRegion),
//     so the program cannot rewrite it, or the header of a later record
//     in the same place, once the reader owns it. The reader checks every
//     header length against what was produced before copying. A record
//     the run still holds when it ends (it failed after reserving, or an
//     unverified program never committed) is discarded then
//     (vm.Env.Hold), so that the reader does not wait behind it for ever.
//   - ringbuf_output/reserve/query: the size is an argument, bounded by
//     the ring; the data is a checked region.
//   - map helpers: key and value sizes come from the map, never from the
//     program; lookups hand out exactly the value (an array: its block),
//     read-only for BPF_F_RDONLY_PROG maps. A value stays a region after
//     map_delete_elem and may be reused by a later element, as in Linux
//     (preallocated elements); the memory stays the map's, so this is a
//     data race for the program, not a hazard for the host. A value
//     argument may point into the map itself (a copy within the map).
//   - queue push/pop/peek: the value size is the map's; the destination a
//     checked writable region.
//   - tail_call: the index is bounds-checked by the program array, and
//     the map must be one of the program's own.
//   - probe_read_user(_str), the %s, %pks, %pus and %pI/%pi conversions:
//     they read any address of the process on purpose, fault-safely
//     (process_vm_readv or /proc/self/mem); they can disclose host memory
//     to the program, never corrupt it. Their destination is a checked
//     writable region, their size an argument.
//   - strncmp, get_current_comm: sizes are arguments; both buffers checked.
//   - loop: the callback must be a function of the program (vm
//     CallFunction); the context is passed on, never dereferenced.
//   - snprintf, trace_printk, trace_vprintk: the argument array is copied
//     before use and the format is validated; the output is bounded by
//     str_size. The format, however, may lie in writable memory (Linux
//     requires read-only memory) and even overlap the output buffer, so
//     the text rendered can differ from the text validated; rendering is
//     bounded by the copied arguments and prepared strings, so the result
//     is wrong output, not unsafe memory.
//   - the clock, random, id and numa helpers read no program memory.
//
// Every helper has the prototype of its Linux bpf_func_proto, GPL-only
// flag included (trace_printk, trace_vprintk, snprintf and the probe_read
// helpers are GPL-only), for the verifier and the ELF loader's license
// check. vm.ArgKind has no "or NULL" and no uninitialised-map-value kinds
// yet; protos.go notes where the closest stricter kind stands in.
//
// The printf helpers (trace_printk, trace_vprintk, snprintf) accept exactly
// what Linux's bpf_bprintf_prepare accepts — %d %i %u %x %X with l/ll, %c,
// %s, %%, %p %pK %px %ps %pS %pB %pks %pus %pi4 %pI4 %pi6 %pI6, flags
// 0 + - space and a width — and fail with the kernel's -EINVAL or -ENOSPC
// otherwise. Pointers print unhashed; %ps/%pS/%pB name Go functions.
//
// # Left out
//
//   - perf_event_output (25): there is no perf event array in userspace;
//     programs should use a ring buffer (ringbuf_output), which is also
//     what Linux recommends.
//   - get_func_ip (173): Linux returns the address of the traced kernel
//     function (kprobe, fentry). A program run by uebpf traces no function;
//     an embedder that attaches programs to code (a tracepoint package) can
//     register its own helper 173 that returns the site.
//   - jiffies64 (118): jiffies count at the kernel's CONFIG_HZ, which a
//     process cannot know.
//   - strtol/strtoul (105, 106): their result pointer is Linux's
//     ARG_PTR_TO_FIXED_SIZE_MEM, which vm.ArgKind cannot express yet.
//   - helpers on kernel objects (tasks, sockets, cgroups, skb, xdp),
//     spin locks, timers, dynptrs, for_each_map_elem: no userspace meaning
//     or no support in package maps yet.
package helpers
