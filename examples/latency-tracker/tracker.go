//go:build linux

// Package tracker is the adaptive syscall latency tracker: kernel eBPF
// programs on the raw tracepoints sys_enter/sys_exit measure the system
// calls of tracked threads, and userspace eBPF programs, run by uebpf in
// this process over the same kernel maps, decide which threads are tracked
// and what counts as slow for each system call. See tracker.bpf.c and the
// command in cmd/latency-tracker.
//
// The two sides share memory: the per-syscall histograms, the thresholds
// and the tracked-id bitmap are BPF_F_MMAPABLE arrays mmapped into this
// process, so the policy program reads the histograms and writes the
// thresholds at memory speed, and the kernel uses a new threshold on the
// very next system call. Slow calls come back through a ring buffer.
package tracker

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/kbridge"
)

//go:embed tracker.bpf.o
var object []byte

// Layout of tracker.bpf.c.
const (
	NumSyscalls = 512 // syscall numbers tracked: 0..NumSyscalls-1
	NumBuckets  = 40  // bucket b counts latencies in [2^b, 2^(b+1)) ns
	maxID       = 1 << 22
	statsSize   = 8 * (5 + NumBuckets)
	eventSize   = 64
	idWords     = maxID / 64
)

// The bitmaps of map tracked (BM_* in tracker.bpf.c).
const (
	bmThread  = iota // thread id: measured
	bmThreads        // process id: its new threads are tracked
	bmFollow         // process id: its new child processes are tracked
	bmExclude        // process id: never tracked in system-wide mode
	bmOnExec         // process id: tracked from its next execve on
	numBitmaps
)

// Policy selects how thresholds are set.
type Policy uint32

const (
	// PolicyStatic uses Config.Static for every system call.
	PolicyStatic Policy = iota
	// PolicyPercentile uses a percentile of the observed latencies times a
	// factor.
	PolicyPercentile
	// PolicyStddev uses mean + k·stddev of the observed latencies.
	PolicyStddev
)

func (p Policy) String() string {
	switch p {
	case PolicyStatic:
		return "static"
	case PolicyPercentile:
		return "percentile"
	case PolicyStddev:
		return "stddev"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// ParsePolicy parses "static", "percentile" or "stddev".
func ParsePolicy(s string) (Policy, error) {
	for _, p := range []Policy{PolicyStatic, PolicyPercentile, PolicyStddev} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (want percentile, stddev or static)", s)
}

// Config configures a Tracker. Zero fields take the defaults given.
type Config struct {
	Policy     Policy
	Percentile float64       // percentile policy: which percentile (default 99)
	Factor     float64       // percentile policy: multiplier (default 2)
	K          float64       // stddev policy: mean + K·stddev (default 3)
	Static     time.Duration // static policy: the threshold of every syscall
	// Initial is the threshold of a syscall with fewer than MinSamples
	// observations (default 10ms).
	Initial    time.Duration
	MinSamples uint64        // default 100
	Floor      time.Duration // lowest adaptive threshold (default 20µs)
	// Decay halves the histograms each time the policy runs, so that
	// thresholds follow the recent behaviour.
	Decay bool
	// RingSize is the ring buffer's size in bytes, a power of two multiple
	// of the page size (default 1 MiB).
	RingSize uint32
	// Engine runs the userspace programs (default: uebpf.EngineAuto).
	Engine *uebpf.Engine
	// GroupBy also counts calls per process or per thread (TaskStats),
	// at some cost on each tracked call; GroupNone costs nothing.
	GroupBy Grouping
}

// Grouping selects per-task counts.
type Grouping uint32

const (
	GroupNone    Grouping = iota
	GroupProcess          // by process id
	GroupThread           // by thread id
)

func (c *Config) withDefaults() Config {
	d := *c
	if d.Percentile == 0 {
		d.Percentile = 99
	}
	if d.Factor == 0 {
		d.Factor = 2
	}
	if d.K == 0 {
		d.K = 3
	}
	if d.Initial == 0 {
		d.Initial = 10 * time.Millisecond
	}
	if d.MinSamples == 0 {
		d.MinSamples = 100
	}
	if d.Floor == 0 {
		d.Floor = 20 * time.Microsecond
	}
	return d
}

// Event is a slow system call.
type Event struct {
	Time      time.Time // when it returned
	Latency   time.Duration
	Threshold time.Duration // the threshold it exceeded
	PID, TID  uint32
	Syscall   uint32
	Return    int64 // the call's return value; -errno when it failed
	Comm      string
}

// SyscallNumber returns the x86-64 system call number of name.
func SyscallNumber(name string) (uint32, bool) {
	for nr, n := range syscallNames {
		if n == name {
			return nr, true
		}
	}
	return 0, false
}

// SyscallName returns the name of an x86-64 system call number.
func SyscallName(nr uint32) string {
	if name, ok := syscallNames[nr]; ok {
		return name
	}
	return "syscall_" + strconv.FormatUint(uint64(nr), 10)
}

// Stats are one system call's counters since start, summed over CPUs.
type Stats struct {
	Count uint64
	Sum   time.Duration
	Slow  uint64 // calls above the threshold
	// Min and Max are exact; see Tracker.Stats and Tracker.Snapshot for
	// the time they cover. Zero when no call was measured.
	Min, Max time.Duration
	Buckets  [NumBuckets]uint64
}

// Mean is the exact mean latency (0 without calls).
func (s *Stats) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.Count)
}

// Percentile estimates the p-th percentile from the histogram: the upper
// end of the bucket that holds it. PercentileRange gives the bucket.
func (s *Stats) Percentile(p float64) time.Duration {
	_, hi := s.PercentileRange(p)
	return hi
}

// PercentileRange returns the log2 bucket [lo, hi] that holds the p-th
// percentile: the histogram tells no more. Both are 0 without calls.
func (s *Stats) PercentileRange(p float64) (lo, hi time.Duration) {
	var total uint64
	for _, c := range s.Buckets {
		total += c
	}
	if total == 0 {
		return 0, 0
	}
	want := max(uint64(math.Ceil(float64(total)*p/100)), 1)
	var cum uint64
	b := NumBuckets - 1
	for i, c := range s.Buckets {
		cum += c
		if cum >= want {
			b = i
			break
		}
	}
	if b > 0 {
		lo = time.Duration(1) << b
	}
	return lo, time.Duration(2<<b - 1)
}

// policyCtx is struct policy_ctx.
type policyCtx struct {
	Policy     uint32
	Permille   uint32
	FactorPct  uint32
	KPct       uint32
	MinSamples uint64
	InitialNs  uint64
	StaticNs   uint64
	FloorNs    uint64
	Decay      uint32
	Pad        uint32
	Changed    uint64
	Adapted    uint64
}

// Tracker is a loaded, attached tracker.
type Tracker struct {
	cfg        Config
	coll       *uebpf.Collection
	policy     *uebpf.Program
	register   *uebpf.Program
	ncpu       int
	tracked    []byte             // mmapped
	stats      []byte             // mmapped, NumSyscalls slots per CPU
	hist       []byte             // mmapped, the policy's view
	thresholds []byte             // mmapped
	counters   []byte             // mmapped
	merged     [NumSyscalls]Stats // the CPUs' counts the policy has seen
	ring       *kbridge.RingReader
	delivered  atomic.Uint64
	monoOffset time.Duration // wall clock minus CLOCK_MONOTONIC
}

// ErrPermission is wrapped when the kernel refuses to load the tracker for
// lack of privileges.
var ErrPermission = uebpf.ErrKernelPermission

// ErrNoTracefs is wrapped when the tracker's tracepoints cannot be
// attached because tracefs is not mounted.
var ErrNoTracefs = uebpf.ErrNoTracefs

// ErrNoBTF is wrapped when the kernel does not describe its types (BTF,
// CONFIG_DEBUG_INFO_BTF): the programs find the fields of the current
// task through it.
var ErrNoBTF = errors.New("the kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF)")

// New loads the tracker's kernel and userspace programs, sets the initial
// thresholds by the policy and attaches the kernel programs. Nothing is
// tracked until Track is called.
func New(cfg Config) (*Tracker, error) {
	cfg = cfg.withDefaults()
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return nil, fmt.Errorf("tracker: %w", ErrNoBTF)
	}
	spec, err := elf.LoadSpecFromReader(bytes.NewReader(object))
	if err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	if cfg.RingSize != 0 {
		spec.Maps["events"].MaxEntries = cfg.RingSize
	}
	if err := checkTracepointFormats(); err != nil {
		return nil, err
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	spec.Maps["stats"].MaxEntries = uint32(ncpu * NumSyscalls)
	engine := uebpf.EngineAuto
	if cfg.Engine != nil {
		engine = *cfg.Engine
	}
	// The userspace programs are verified at load (uebpf's default), so
	// the JIT runs them without run-time checks.
	if cfg.GroupBy > GroupThread {
		return nil, fmt.Errorf("tracker: grouping %d unknown", cfg.GroupBy)
	}
	vars := map[string]any{"per_task": uint32(cfg.GroupBy), "exit_group_dead": uint8(0)}
	if hasGroupDead() {
		vars["exit_group_dead"] = uint8(1)
	}
	coll, err := uebpf.NewCollection(spec, &uebpf.Options{Kernel: true, Engine: engine, Variables: vars})
	if errors.Is(err, ErrPermission) {
		// Ours alone: the kernel's error comes with cilium/ebpf's advice
		// about RLIMIT_MEMLOCK, which does not apply here.
		return nil, fmt.Errorf("tracker: %w", ErrPermission)
	}
	if err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	t := &Tracker{cfg: cfg, coll: coll, policy: coll.Program("policy"), register: coll.Program("register_id"), ncpu: ncpu}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	for name, dst := range map[string]*[]byte{"tracked": &t.tracked, "stats": &t.stats, "hist": &t.hist, "thresholds": &t.thresholds, "counters": &t.counters} {
		a, isArray := coll.KernelMap(name).(*kbridge.Array)
		if !isArray {
			return nil, fmt.Errorf("tracker: map %s is not mmapped", name)
		}
		*dst = a.Memory()
	}
	if t.ring, err = kbridge.NewRingReader(coll.Kernel.Maps["events"], &kbridge.RingReaderOptions{Drops: coll.Kernel.Maps["counters"]}); err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	t.monoOffset = time.Duration(time.Now().UnixNano() - ts.Nano())
	if _, err := t.UpdateThresholds(); err != nil {
		return nil, err
	}
	if err := coll.AttachKernel(); err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	ok = true
	return t, nil
}

// Config returns the configuration in use, with defaults filled in.
func (t *Tracker) Config() Config { return t.cfg }

// Track marks thread tid as tracked (its system calls are measured from
// the next one on), by running the userspace program uebpf/register, which
// sets a bit in a bitmap the kernel programs read. It reports whether the
// thread was tracked already.
func (t *Tracker) Track(tid int) (bool, error) { return t.setBit(bmThread, tid, true) }

// Untrack stops tracking thread tid.
func (t *Tracker) Untrack(tid int) (bool, error) { return t.setBit(bmThread, tid, false) }

// ErrNoProcess is wrapped when a process to track does not exist.
var ErrNoProcess = errors.New("no such process")

// TrackProcess tracks every thread of process pid, present and future:
// the kernel program marks the process's new threads as they are created.
// With follow, the child processes it creates from now on are tracked
// too, and theirs (as strace -f does). It fails with ErrNoProcess when pid
// does not exist.
func (t *Tracker) TrackProcess(pid int, follow bool) error {
	// The flags first: a thread created while the present ones are
	// listed is then marked by the kernel.
	if _, err := t.setBit(bmThreads, pid, true); err != nil {
		return err
	}
	if _, err := t.setBit(bmFollow, pid, follow); err != nil {
		return err
	}
	tids, err := threads(pid)
	if err != nil {
		t.setBit(bmThreads, pid, false)
		t.setBit(bmFollow, pid, false)
		return err
	}
	for _, tid := range tids {
		if _, err := t.setBit(bmThread, tid, true); err != nil {
			return err
		}
	}
	return nil
}

// UntrackProcess stops tracking process pid and its present threads (its
// followed children stay tracked).
func (t *Tracker) UntrackProcess(pid int) error {
	for _, bm := range []int{bmThreads, bmFollow, bmOnExec} {
		if _, err := t.setBit(bm, pid, false); err != nil {
			return err
		}
	}
	tids, _ := threads(pid) // gone: the kernel cleared its bits
	for _, tid := range tids {
		if _, err := t.setBit(bmThread, tid, false); err != nil {
			return err
		}
	}
	return nil
}

// TrackOnExec tracks process pid from its next successful execve on (the
// calls of the new program, not those before), with its threads, and,
// with follow, its children.
func (t *Tracker) TrackOnExec(pid int, follow bool) error {
	if _, err := t.setBit(bmFollow, pid, follow); err != nil {
		return err
	}
	_, err := t.setBit(bmOnExec, pid, true)
	return err
}

// TrackAll tracks every thread of the machine, present and future, except
// this process's own.
func (t *Tracker) TrackAll() error {
	self := os.Getpid()
	if _, err := t.setBit(bmExclude, self, true); err != nil {
		return err
	}
	atomic.StoreUint64(t.word(numBitmaps*idWords), 1) // new tasks: tracked
	// Every bit at once, in the mmapped bitmap: a program run per id
	// would take 4M runs.
	for w := 0; w < idWords; w++ {
		atomic.StoreUint64(t.word(bmThread*idWords+w), math.MaxUint64)
	}
	atomic.AndUint64(t.word(0), ^uint64(1)) // id 0: the idle tasks
	// A thread this process starts from now on stays untracked (the
	// exclude bit); those it has are cleared here.
	tids, err := threads(self)
	if err != nil {
		return err
	}
	for _, tid := range tids {
		if _, err := t.setBit(bmThread, tid, false); err != nil {
			return err
		}
	}
	return nil
}

// Tracked reports whether thread tid is tracked now.
func (t *Tracker) Tracked(tid int) bool {
	if tid <= 0 || tid >= maxID {
		return false
	}
	return atomic.LoadUint64(t.word(tid>>6))>>(tid&63)&1 == 1
}

func (t *Tracker) word(i int) *uint64 {
	return (*uint64)(unsafe.Pointer(&t.tracked[8*i]))
}

// threads lists the thread ids of process pid.
func threads(pid int) ([]int, error) {
	if pid <= 0 || pid >= maxID {
		return nil, fmt.Errorf("tracker: process %d: %w", pid, ErrNoProcess)
	}
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("tracker: process %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return nil, fmt.Errorf("tracker: process %d: %w", pid, err)
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

func (t *Tracker) setBit(bitmap, id int, on bool) (bool, error) {
	if id <= 0 || id >= maxID {
		return false, fmt.Errorf("tracker: id %d out of range 1..%d", id, maxID-1)
	}
	// Contexts live on the heap: program memory must not move.
	c := make([]byte, 8)
	binary.NativeEndian.PutUint32(c, uint32(id))
	if on {
		binary.NativeEndian.PutUint16(c[4:], 1)
	}
	binary.NativeEndian.PutUint16(c[6:], uint16(bitmap))
	r0, err := t.register.Run(c)
	if err != nil {
		return false, fmt.Errorf("tracker: register %d: %w", id, err)
	}
	if int64(r0) < 0 {
		return false, fmt.Errorf("tracker: register %d: program returned %d", id, int64(r0))
	}
	return r0 == 1, nil
}

// UpdateThresholds runs the policy program once: every syscall's threshold
// is set from its histogram (or to the static value). It returns how many
// thresholds changed.
func (t *Tracker) UpdateThresholds() (int, error) {
	t.mergeHist()
	pc := t.policyCtx()
	c, err := binary.Append(nil, binary.NativeEndian, &pc)
	if err != nil {
		return 0, err
	}
	if _, err := t.policy.Run(c); err != nil {
		return 0, fmt.Errorf("tracker: policy: %w", err)
	}
	if _, err := binary.Decode(c, binary.NativeEndian, &pc); err != nil {
		return 0, err
	}
	return int(pc.Changed), nil
}

// SetStatic switches to the static policy with the given threshold, or
// back (d = 0) to the configured policy, and applies it at once.
func (t *Tracker) SetStatic(d time.Duration) error {
	if d > 0 {
		t.cfg.Policy, t.cfg.Static = PolicyStatic, d
	}
	_, err := t.UpdateThresholds()
	return err
}

func (t *Tracker) policyCtx() policyCtx {
	c := &t.cfg
	pc := policyCtx{
		Policy:     uint32(c.Policy),
		Permille:   uint32(math.Round(c.Percentile * 10)),
		FactorPct:  uint32(math.Round(c.Factor * 100)),
		KPct:       uint32(math.Round(c.K * 100)),
		MinSamples: c.MinSamples,
		InitialNs:  uint64(c.Initial),
		StaticNs:   uint64(c.Static),
		FloorNs:    uint64(c.Floor),
	}
	if c.Decay {
		pc.Decay = 1
	}
	return pc
}

// Threshold returns syscall nr's current threshold (0: none).
func (t *Tracker) Threshold(nr uint32) time.Duration {
	if nr >= NumSyscalls {
		return 0
	}
	return time.Duration(atomicLoad(t.thresholds, int(nr)*8))
}

// Stats returns syscall nr's counters since start, summed over CPUs; Min
// and Max cover the time since the last Snapshot.
func (t *Tracker) Stats(nr uint32) Stats { return t.stats1(nr, false) }

func (t *Tracker) stats1(nr uint32, takeMinMax bool) Stats {
	var s Stats
	if nr >= NumSyscalls {
		return s
	}
	for cpu := 0; cpu < t.ncpu; cpu++ {
		var c Stats
		readStats(t.stats, (cpu*NumSyscalls+int(nr))*statsSize, &c, takeMinMax)
		s.Count += c.Count
		s.Sum += c.Sum
		s.Slow += c.Slow
		for b := range s.Buckets {
			s.Buckets[b] += c.Buckets[b]
		}
		if c.Min > 0 && (s.Min == 0 || c.Min < s.Min) {
			s.Min = c.Min
		}
		s.Max = max(s.Max, c.Max)
	}
	return s
}

// readStats reads one struct sys_stats, which the kernel writes
// concurrently; with take, Min and Max are read and zeroed at once so that
// the next reading covers the time from now.
func readStats(mem []byte, off int, s *Stats, take bool) {
	s.Count = atomicLoad(mem, off)
	s.Sum = time.Duration(atomicLoad(mem, off+8))
	s.Slow = atomicLoad(mem, off+16)
	if take {
		s.Min = time.Duration(atomic.SwapUint64(word(mem, off+24), 0))
		s.Max = time.Duration(atomic.SwapUint64(word(mem, off+32), 0))
	} else {
		s.Min = time.Duration(atomicLoad(mem, off+24))
		s.Max = time.Duration(atomicLoad(mem, off+32))
	}
	for b := range s.Buckets {
		s.Buckets[b] = atomicLoad(mem, off+40+8*b)
	}
}

// PolicyStats returns the histogram the policy program last worked on:
// the counts since start, or, with Decay, halved at each policy run.
func (t *Tracker) PolicyStats(nr uint32) Stats {
	var s Stats
	if nr < NumSyscalls {
		readStats(t.hist, int(nr)*statsSize, &s, false)
	}
	return s
}

// mergeHist adds the calls counted on every CPU since the last policy run
// to the policy's histogram (which the policy program halves with Decay).
func (t *Tracker) mergeHist() {
	for nr := range uint32(NumSyscalls) {
		cur := t.Stats(nr)
		last := &t.merged[nr]
		if cur.Count == last.Count {
			continue
		}
		off := int(nr) * statsSize
		add := func(o int, d uint64) { atomic.AddUint64(word(t.hist, off+o), d) }
		add(0, cur.Count-last.Count)
		add(8, uint64(cur.Sum-last.Sum))
		add(16, cur.Slow-last.Slow)
		for b := range cur.Buckets {
			add(40+8*b, cur.Buckets[b]-last.Buckets[b])
		}
		*last = cur
	}
}

func word(mem []byte, off int) *uint64 { return (*uint64)(unsafe.Pointer(&mem[off])) }

// atomicLoad reads a word of mmapped memory the kernel writes concurrently.
func atomicLoad(mem []byte, off int) uint64 {
	return atomic.LoadUint64(word(mem, off))
}

// Drops returns how many slow calls the kernel could not report because
// the ring buffer was full.
func (t *Tracker) Drops() uint64 { return atomicLoad(t.counters, 0) }

// Delivered returns how many events ReadEvents has delivered.
func (t *Tracker) Delivered() uint64 { return t.delivered.Load() }

// ReadEvents hands fn the slow system calls as they are reported, until ctx
// is done or reading fails. When ctx is done, it first hands fn the events
// already in the ring buffer, then returns nil.
func (t *Tracker) ReadEvents(ctx context.Context, fn func(Event)) error {
	defer func() {
		// Drain: events of calls that ended before ctx was done.
		for t.ring.AvailableBytes() > 0 {
			t.ring.SetDeadline(time.Now().Add(10 * time.Millisecond))
			n, err := t.ring.ReadBatch(0, func(s []byte) {
				if e, ok := t.decode(s); ok {
					fn(e)
				}
			})
			t.delivered.Add(uint64(n))
			if err != nil {
				return
			}
		}
	}()
	for ctx.Err() == nil {
		t.ring.SetDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := t.ring.ReadBatch(0, func(s []byte) {
			if e, ok := t.decode(s); ok {
				fn(e)
			}
		})
		t.delivered.Add(uint64(n))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("tracker: %w", err)
		}
	}
	return nil
}

// decode parses struct event.
func (t *Tracker) decode(s []byte) (Event, bool) {
	if len(s) < eventSize {
		return Event{}, false
	}
	le := binary.NativeEndian
	comm := s[48:64]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return Event{
		Time:      time.Unix(0, int64(le.Uint64(s[0:]))+int64(t.monoOffset)),
		Latency:   time.Duration(le.Uint64(s[8:])),
		Threshold: time.Duration(le.Uint64(s[16:])),
		Return:    int64(le.Uint64(s[24:])),
		PID:       le.Uint32(s[32:]),
		TID:       le.Uint32(s[36:]),
		Syscall:   le.Uint32(s[40:]),
		Comm:      string(comm),
	}, true
}

// TaskStats are one process's or thread's counts for one system call
// since start (Config.GroupBy).
type TaskStats struct {
	ID      uint32 // process or thread id
	Comm    string // its command name when first seen
	Syscall uint32
	Count   uint64
	Slow    uint64
	Sum     time.Duration
	Max     time.Duration
}

// TaskStats returns the per-task counts kept with Config.GroupBy (none
// without). The kernel keeps the 16384 most recently used.
func (t *Tracker) TaskStats() ([]TaskStats, error) {
	if t.cfg.GroupBy == GroupNone {
		return nil, nil
	}
	var (
		out []TaskStats
		key [8]byte
		val []byte
	)
	it := t.coll.Kernel.Maps["tasks"].Iterate()
	for it.Next(&key, &val) {
		if len(val) < 48 {
			continue
		}
		le := binary.NativeEndian
		comm := val[32:48]
		if i := bytes.IndexByte(comm, 0); i >= 0 {
			comm = comm[:i]
		}
		out = append(out, TaskStats{
			ID: le.Uint32(key[0:]), Syscall: le.Uint32(key[4:]), Comm: string(comm),
			Count: le.Uint64(val[0:]), Sum: time.Duration(le.Uint64(val[8:])),
			Slow: le.Uint64(val[16:]), Max: time.Duration(le.Uint64(val[24:])),
		})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("tracker: per-task counts: %w", err)
	}
	return out, nil
}

// Collection returns the loaded collection, for tools and tests.
func (t *Tracker) Collection() *uebpf.Collection { return t.coll }

// Close detaches the kernel programs and releases everything.
func (t *Tracker) Close() error {
	var errs []error
	if t.ring != nil {
		errs = append(errs, t.ring.Close())
	}
	errs = append(errs, t.coll.Close())
	return errors.Join(errs...)
}
