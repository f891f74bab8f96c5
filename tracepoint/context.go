package tracepoint

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"github.com/uebpf/uebpf/internal/clock"
)

// Context is the block that follows the payload in a record, at the
// payload size rounded up to 8. Its layout is the C struct
// uebpf_tp_ctx that Header writes.
type Context struct {
	// TimestampNs is CLOCK_MONOTONIC in nanoseconds, the clock of
	// bpf_ktime_get_ns, to within a few microseconds (see
	// internal/clock: it is read from the CPU's counter).
	TimestampNs uint64
	// Vtid is the OS thread that fired, or 0 when no attachment asked for
	// it.
	Vtid int64
	// Vpid is the process id.
	Vpid int64
	// Goid is the goroutine that fired, or 0 when no attachment asked for
	// it.
	Goid uint64
	// Procname is the process's name (comm), NUL-terminated.
	Procname [16]byte
}

// ContextSize is the size of the context block.
const ContextSize = int(unsafe.Sizeof(Context{}))

// Names of the context fields, as filters write them.
const (
	CtxTimestamp = "$ctx.timestamp"
	CtxVtid      = "$ctx.vtid"
	CtxVpid      = "$ctx.vpid"
	CtxGoid      = "$ctx.goid"
	CtxProcname  = "$ctx.procname"
)

// ContextFields lists the fields of the context block, with offsets from
// the block's start (Info.RecordFields gives them from the record's).
func ContextFields() []Field { return slices.Clone(contextFields[:]) }

var contextFields = [...]Field{
	{Name: CtxTimestamp, Kind: Unsigned, Size: 8, Offset: int(unsafe.Offsetof(Context{}.TimestampNs))},
	{Name: CtxVtid, Kind: Signed, Size: 8, Offset: int(unsafe.Offsetof(Context{}.Vtid))},
	{Name: CtxVpid, Kind: Signed, Size: 8, Offset: int(unsafe.Offsetof(Context{}.Vpid))},
	{Name: CtxGoid, Kind: Unsigned, Size: 8, Offset: int(unsafe.Offsetof(Context{}.Goid))},
	{Name: CtxProcname, Kind: String, Size: 16, Offset: int(unsafe.Offsetof(Context{}.Procname))},
}

// Needs says which costly context fields an attachment reads, so that a
// firing fills them only when some attachment does.
type needs uint8

const (
	// needStatic is the process's part of the block (vpid, procname):
	// a copy, cheap, but not free for filters that read none of it.
	needStatic needs = 1 << iota
	needTimestamp
	needTid
	needGoid
)

// needsOf maps context field names to what filling them costs.
func needsOf(uses []string) needs {
	var n needs
	for _, u := range uses {
		switch u {
		case CtxVpid, CtxProcname:
			n |= needStatic
		case CtxTimestamp:
			n |= needTimestamp
		case CtxVtid:
			n |= needTid
		case CtxGoid:
			n |= needGoid
		}
	}
	return n
}

// processContext is the part of the context that is the same for the
// whole process, read once at init: a plain variable is cheaper to copy
// on every firing than a sync.OnceValue.
var processContext = readProcessContext()

func readProcessContext() Context {
	c := Context{Vpid: int64(os.Getpid())}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		comm = []byte(filepath.Base(os.Args[0]))
	}
	comm = bytes.TrimRight(comm, "\n")
	copy(c.Procname[:len(c.Procname)-1], comm)
	return c
}

// fillContext writes the context block at c: the process's part, and the
// costly fields n asks for (the others are 0).
func fillContext(c *Context, n needs) {
	*c = processContext
	if n&needTimestamp != 0 {
		c.TimestampNs = uint64(clock.Now())
	}
	if n&needTid != 0 {
		c.Vtid = int64(gettid())
	}
	if n&needGoid != 0 {
		c.Goid = goid()
	}
}
