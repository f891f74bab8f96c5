package helpers

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/uebpf/uebpf/vm"
)

// Helper numbers, as in Linux's enum bpf_func_id. Only the helpers this
// package implements have a constant; see the package documentation for
// the ones it leaves out and why.
const (
	MapLookupElem       = 1
	MapUpdateElem       = 2
	MapDeleteElem       = 3
	ProbeRead           = 4
	KtimeGetNs          = 5
	TracePrintk         = 6
	GetPrandomU32       = 7
	GetSmpProcessorID   = 8
	TailCall            = 12
	GetCurrentPidTgid   = 14
	GetCurrentUidGid    = 15
	GetCurrentComm      = 16
	GetNumaNodeID       = 42
	ProbeReadStr        = 45
	MapPushElem         = 87
	MapPopElem          = 88
	MapPeekElem         = 89
	ProbeReadUser       = 112
	ProbeReadUserStr    = 114
	KtimeGetBootNs      = 125
	RingbufOutput       = 130
	RingbufReserve      = 131
	RingbufSubmit       = 132
	RingbufDiscard      = 133
	RingbufQuery        = 134
	KtimeGetCoarseNs    = 160
	Snprintf            = 165
	TraceVprintk        = 177
	Loop                = 181
	Strncmp             = 182
	MapLookupPercpuElem = 195
	KtimeGetTaiNs       = 208
)

// FirstApplicationHelper is the first helper number of the range that
// applications use for their own helpers. Linux's numbers stay far below
// it, so application helpers never collide with a future standard helper.
const FirstApplicationHelper = 0x10000

// Config tunes the standard helpers. The zero value (or a nil *Config) is
// ready to use.
type Config struct {
	// Output receives bpf_trace_printk and bpf_trace_vprintk lines (one
	// Write per line). Default io.Discard. Writes are serialised, so the
	// writer need not be safe for concurrent use.
	Output io.Writer
	// Rand is the source of bpf_get_prandom_u32. Default: a fast,
	// lock-free PRNG (math/rand/v2's runtime source). It must be safe for
	// concurrent use.
	Rand func() uint32
	// Clock, if set, replaces the clocks of every bpf_ktime_get_*ns helper,
	// so that tests see predictable times.
	Clock func() uint64
}

// Errors of Register.
var (
	ErrInvalidHelper = errors.New("invalid helper")
	ErrHelperExists  = errors.New("helper number already registered")
)

// Standard returns a new set holding every standard helper of this
// package, configured by cfg (nil: defaults). The set is the caller's: add
// application helpers to it with Register.
func Standard(cfg *Config) vm.Helpers {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.Output == nil {
		c.Output = io.Discard
	}
	if c.Rand == nil {
		c.Rand = rand.Uint32
	}
	set := make(vm.Helpers, 40)
	for _, h := range standard(&c) {
		set[h.num] = vm.Helper{Name: h.name, Func: h.fn, Proto: h.proto, ArrayLookup: h.num == MapLookupElem,
			HashLookup: h.num == MapLookupElem, HashUpdate: h.num == MapUpdateElem}
	}
	return set
}

// Register adds an application helper to set under num. It refuses a
// negative number, a number set already holds, a nil set and a nil fn.
// Application helpers conventionally use numbers from
// FirstApplicationHelper on. proto is what the verifier checks calls
// against; with a nil proto the verifier refuses calls to the helper.
func Register(set vm.Helpers, num int32, name string, fn vm.HelperFunc, proto *vm.Prototype) error {
	switch {
	case set == nil:
		return fmt.Errorf("helper %d (%s): nil helper set: %w", num, name, ErrInvalidHelper)
	case num < 0:
		return fmt.Errorf("helper %d (%s): negative number: %w", num, name, ErrInvalidHelper)
	case fn == nil:
		return fmt.Errorf("helper %d (%s): nil function: %w", num, name, ErrInvalidHelper)
	}
	if old, ok := set[num]; ok {
		return fmt.Errorf("helper %d (%s): taken by %s: %w", num, name, old.Name, ErrHelperExists)
	}
	set[num] = vm.Helper{Name: name, Func: fn, Proto: proto}
	return nil
}

// entry is one row of the standard set.
type entry struct {
	num   int32
	name  string
	fn    vm.HelperFunc
	proto *vm.Prototype
}

// standard lists the default set. doc.go has the same table for people.
func standard(c *Config) []entry {
	clk := newClocks(c.Clock)
	pr := &printer{out: c.Output}
	rnd := c.Rand
	return []entry{
		{MapLookupElem, "map_lookup_elem", mapLookupElem, protoLookup},
		{MapUpdateElem, "map_update_elem", mapUpdateElem, protoUpdate},
		{MapDeleteElem, "map_delete_elem", mapDeleteElem, protoDelete},
		{ProbeRead, "probe_read", probeReadUser, protoProbeRead},
		{KtimeGetNs, "ktime_get_ns", clk.monotonic, protoNoArgs},
		{TracePrintk, "trace_printk", pr.tracePrintk, protoTracePrintk},
		{GetPrandomU32, "get_prandom_u32", func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 {
			return uint64(rnd())
		}, protoNoArgs},
		{GetSmpProcessorID, "get_smp_processor_id", getSmpProcessorID, protoNoArgs},
		{TailCall, "tail_call", tailCall, protoTailCall},
		{GetCurrentPidTgid, "get_current_pid_tgid", getCurrentPidTgid, protoNoArgs},
		{GetCurrentUidGid, "get_current_uid_gid", getCurrentUidGid, protoNoArgs},
		{GetCurrentComm, "get_current_comm", getCurrentComm, protoGetComm},
		{GetNumaNodeID, "get_numa_node_id", getNumaNodeID, protoNoArgs},
		{ProbeReadStr, "probe_read_str", probeReadUserStr, protoProbeRead},
		{MapPushElem, "map_push_elem", mapPushElem, protoPush},
		{MapPopElem, "map_pop_elem", mapPopElem, protoPopPeek},
		{MapPeekElem, "map_peek_elem", mapPeekElem, protoPopPeek},
		{ProbeReadUser, "probe_read_user", probeReadUser, protoProbeRead},
		{ProbeReadUserStr, "probe_read_user_str", probeReadUserStr, protoProbeRead},
		{KtimeGetBootNs, "ktime_get_boot_ns", clk.boot, protoNoArgs},
		{RingbufOutput, "ringbuf_output", ringbufOutput, protoRingbufOutput},
		{RingbufReserve, "ringbuf_reserve", ringbufReserve, protoRingbufReserve},
		{RingbufSubmit, "ringbuf_submit", ringbufSubmit, protoRingbufCommit},
		{RingbufDiscard, "ringbuf_discard", ringbufDiscard, protoRingbufCommit},
		{RingbufQuery, "ringbuf_query", ringbufQuery, protoRingbufQuery},
		{KtimeGetCoarseNs, "ktime_get_coarse_ns", clk.coarse, protoNoArgs},
		{Snprintf, "snprintf", snprintf, protoSnprintf},
		{TraceVprintk, "trace_vprintk", pr.traceVprintk, protoTraceVprintk},
		{Loop, "loop", loop, protoLoop},
		{Strncmp, "strncmp", strncmp, protoStrncmp},
		{MapLookupPercpuElem, "map_lookup_percpu_elem", mapLookupPercpuElem, protoLookupPercpu},
		{KtimeGetTaiNs, "ktime_get_tai_ns", clk.tai, protoNoArgs},
	}
}
