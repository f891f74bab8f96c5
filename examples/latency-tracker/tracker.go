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
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

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
	statsSize   = 8 * (3 + NumBuckets)
	eventSize   = 56
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
}

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
	Return    int32
	Comm      string
}

// SyscallName returns the name of an x86-64 system call number.
func SyscallName(nr uint32) string {
	if name, ok := syscallNames[nr]; ok {
		return name
	}
	return "syscall_" + strconv.FormatUint(uint64(nr), 10)
}

// Stats are one system call's counters since start (halved by Decay).
type Stats struct {
	Count   uint64
	Sum     time.Duration
	Slow    uint64 // calls above the threshold
	Buckets [NumBuckets]uint64
}

// Percentile estimates the p-th percentile from the histogram: the upper
// end of the bucket that holds it.
func (s *Stats) Percentile(p float64) time.Duration {
	var total uint64
	for _, c := range s.Buckets {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(float64(total) * p / 100))
	var cum uint64
	for b, c := range s.Buckets {
		cum += c
		if cum >= want {
			return time.Duration(2<<b - 1)
		}
	}
	return time.Duration(2<<(NumBuckets-1) - 1)
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
	stats      []byte // mmapped
	thresholds []byte // mmapped
	counters   []byte // mmapped
	ring       *kbridge.RingReader
	delivered  atomic.Uint64
	monoOffset time.Duration // wall clock minus CLOCK_MONOTONIC
}

// ErrPermission is wrapped when the kernel refuses to load the tracker for
// lack of privileges.
var ErrPermission = uebpf.ErrKernelPermission

// New loads the tracker's kernel and userspace programs, sets the initial
// thresholds by the policy and attaches the kernel programs. Nothing is
// tracked until Track is called.
func New(cfg Config) (*Tracker, error) {
	cfg = cfg.withDefaults()
	spec, err := elf.LoadSpecFromReader(bytes.NewReader(object))
	if err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	if cfg.RingSize != 0 {
		spec.Maps["events"].MaxEntries = cfg.RingSize
	}
	engine := uebpf.EngineAuto
	if cfg.Engine != nil {
		engine = *cfg.Engine
	}
	// The userspace programs are verified at load (uebpf's default), so
	// the JIT runs them without run-time checks.
	coll, err := uebpf.NewCollection(spec, &uebpf.Options{Kernel: true, Engine: engine})
	if err != nil {
		return nil, fmt.Errorf("tracker: %w", err)
	}
	t := &Tracker{cfg: cfg, coll: coll, policy: coll.Program("policy"), register: coll.Program("register_id")}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	for name, dst := range map[string]*[]byte{"stats": &t.stats, "thresholds": &t.thresholds, "counters": &t.counters} {
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
func (t *Tracker) Track(tid int) (bool, error) { return t.setTracked(tid, true, false) }

// Untrack stops tracking thread tid.
func (t *Tracker) Untrack(tid int) (bool, error) { return t.setTracked(tid, false, false) }

// TrackProcess tracks every thread of process pid, present and future.
func (t *Tracker) TrackProcess(pid int) (bool, error) { return t.setTracked(pid, true, true) }

// UntrackProcess stops tracking process pid (threads tracked with Track
// stay tracked).
func (t *Tracker) UntrackProcess(pid int) (bool, error) { return t.setTracked(pid, false, true) }

func (t *Tracker) setTracked(id int, on, process bool) (bool, error) {
	if id <= 0 || id >= maxID {
		return false, fmt.Errorf("tracker: id %d out of range 1..%d", id, maxID-1)
	}
	// Contexts live on the heap: program memory must not move.
	c := make([]byte, 8)
	binary.NativeEndian.PutUint32(c, uint32(id))
	if on {
		binary.NativeEndian.PutUint16(c[4:], 1)
	}
	if process {
		binary.NativeEndian.PutUint16(c[6:], 1)
	}
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

// Stats returns syscall nr's counters.
func (t *Tracker) Stats(nr uint32) Stats {
	var s Stats
	if nr >= NumSyscalls {
		return s
	}
	off := int(nr) * statsSize
	s.Count = atomicLoad(t.stats, off)
	s.Sum = time.Duration(atomicLoad(t.stats, off+8))
	s.Slow = atomicLoad(t.stats, off+16)
	for b := range s.Buckets {
		s.Buckets[b] = atomicLoad(t.stats, off+24+8*b)
	}
	return s
}

// atomicLoad reads a word of mmapped memory the kernel writes concurrently.
func atomicLoad(mem []byte, off int) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[off])))
}

// Drops returns how many slow calls the kernel could not report because
// the ring buffer was full.
func (t *Tracker) Drops() uint64 { return atomicLoad(t.counters, 0) }

// Delivered returns how many events ReadEvents has delivered.
func (t *Tracker) Delivered() uint64 { return t.delivered.Load() }

// ReadEvents hands fn the slow system calls as they are reported, until ctx
// is done (it then returns nil) or reading fails.
func (t *Tracker) ReadEvents(ctx context.Context, fn func(Event)) error {
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
	comm := s[40:56]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return Event{
		Time:      time.Unix(0, int64(le.Uint64(s[0:]))+int64(t.monoOffset)),
		Latency:   time.Duration(le.Uint64(s[8:])),
		Threshold: time.Duration(le.Uint64(s[16:])),
		PID:       le.Uint32(s[24:]),
		TID:       le.Uint32(s[28:]),
		Syscall:   le.Uint32(s[32:]),
		Return:    int32(le.Uint32(s[36:])),
		Comm:      string(comm),
	}, true
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
