package helpers

import (
	"bytes"
	"encoding/binary"
	"io"
	"sync"

	"github.com/uebpf/uebpf/vm"
)

// printer implements bpf_trace_printk and bpf_trace_vprintk: each call
// formats one line (at most 1023 bytes, like the kernel's trace buffer) and
// writes it, with a newline unless it ends in one, to Config.Output. In
// Linux the line goes to the trace pipe, which also starts a new line for
// each event.
type printer struct {
	mu  sync.Mutex
	out io.Writer
}

// tracePrintk is bpf_trace_printk(fmt, fmt_size, arg1, arg2, arg3). It
// returns the length of the formatted message (before truncation) or a
// negative errno.
func (pr *printer) tracePrintk(env *vm.Env, r1, r2, r3, r4, r5 uint64) uint64 {
	format, err := sizedFormat(env, r1, r2)
	if err != 0 {
		return err
	}
	args := [maxTracePrintkArgs]uint64{r3, r4, r5}
	return pr.print(env, format, args[:])
}

// traceVprintk is bpf_trace_vprintk(fmt, fmt_size, data, data_len): the
// arguments are data_len/8 u64 values at data (at most 12).
func (pr *printer) traceVprintk(env *vm.Env, r1, r2, r3, r4, _ uint64) uint64 {
	var args [maxBprintfVarargs]uint64
	n, err := dataArgs(env, r3, r4, &args)
	if err != 0 {
		return err
	}
	format, err := sizedFormat(env, r1, r2)
	if err != 0 {
		return err
	}
	return pr.print(env, format, args[:n])
}

func (pr *printer) print(env *vm.Env, format []byte, args []uint64) uint64 {
	p := getPrintf(env)
	defer putPrintf(p)
	if err := p.prepare(format, args); err != 0 {
		return err
	}
	n := p.render(format, p.line[:maxBprintfBuf-1])
	env.Charge(costSyscall + costFormat + costRender(uint64(n)))
	line := p.line[:min(n, maxBprintfBuf-1)]
	if i := bytes.IndexByte(line, 0); i >= 0 { // the trace event copies a C string
		line = line[:i]
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line = append(line, '\n') // within p.line: it has a spare byte
	}
	pr.mu.Lock()
	pr.out.Write(line)
	pr.mu.Unlock()
	return uint64(n)
}

// sizedFormat is the format argument of the trace_printk helpers: fmt_size
// readable bytes holding a NUL. It returns the format without the NUL.
func sizedFormat(env *vm.Env, addr, size uint64) ([]byte, uint64) {
	size = uint64(uint32(size)) // u32 in Linux
	b, ok := env.Bytes(addr, size, false)
	if !ok {
		return nil, badSize(size)
	}
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, retEINVAL
	}
	return b[:i], 0
}

// dataArgs reads the data/data_len argument array of trace_vprintk and
// snprintf into args and returns how many there are.
func dataArgs(env *vm.Env, data, size uint64, args *[maxBprintfVarargs]uint64) (int, uint64) {
	size = uint64(uint32(size)) // u32 in Linux
	if size%8 != 0 || size > maxBprintfVarargs*8 || (size != 0 && data == 0) {
		return 0, retEINVAL
	}
	if size == 0 {
		return 0, 0
	}
	b, ok := env.Bytes(data, size, false)
	if !ok {
		return 0, retEFAULT
	}
	n := int(size / 8)
	for i := range n {
		args[i] = binary.NativeEndian.Uint64(b[8*i:])
	}
	return n, 0
}

// snprintf is bpf_snprintf(str, str_size, fmt, data, data_len): format
// into str, truncated to str_size bytes including a NUL. It returns the
// size the whole output needs, NUL included, or a negative errno; with
// str_size 0 it only measures.
func snprintf(env *vm.Env, r1, r2, r3, r4, r5 uint64) uint64 {
	var args [maxBprintfVarargs]uint64
	n, err := dataArgs(env, r4, r5, &args)
	if err != 0 {
		return err
	}
	format, ok := constString(env, r3)
	if !ok {
		return retEFAULT
	}
	size := uint64(uint32(r2)) // u32 in Linux
	var str []byte
	if size != 0 {
		if str, ok = env.Bytes(r1, size, true); !ok {
			return retEFAULT
		}
	}
	p := getPrintf(env)
	defer putPrintf(p)
	if err := p.prepare(format, args[:n]); err != 0 {
		return err
	}
	if size == 0 {
		out := p.render(format, nil)
		env.Charge(costFormat + costRender(uint64(out)))
		return uint64(out) + 1
	}
	out := p.render(format, str[:size-1])
	env.Charge(costFormat + costRender(uint64(out)))
	str[min(out, int(size)-1)] = 0
	return uint64(out) + 1
}

// constString returns the NUL-terminated string at addr without its NUL.
// The whole string must lie in one region of the run, as Linux's verifier
// requires of ARG_PTR_TO_CONST_STR.
func constString(env *vm.Env, addr uint64) ([]byte, bool) {
	// Grow a window while the run may read it, then pin down where the
	// region ends: the string is usually short, the region often not.
	good, bad := uint64(0), uint64(0)
	for n := uint64(64); ; n *= 2 {
		b, ok := env.Bytes(addr, n, false)
		if !ok || n >= 1<<40 {
			bad = n
			break
		}
		if i := bytes.IndexByte(b[good:], 0); i >= 0 {
			return b[:good+uint64(i)], true
		}
		good = n
	}
	for bad-good > 1 { // the longest readable window is in [good, bad)
		mid := good + (bad-good)/2
		if _, ok := env.Bytes(addr, mid, false); ok {
			good = mid
		} else {
			bad = mid
		}
	}
	if good == 0 {
		return nil, false
	}
	b, _ := env.Bytes(addr, good, false)
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, false
	}
	return b[:i], true
}
