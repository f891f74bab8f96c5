package helpers

import (
	"runtime"
	"strconv"
	"sync"

	"github.com/uebpf/uebpf/vm"
)

// The printf engine of bpf_trace_printk, bpf_trace_vprintk and
// bpf_snprintf. Like Linux it works in two passes over the format:
// prepare (bpf_bprintf_prepare) checks the format and copies what the
// arguments point to (strings, IP addresses) into a 512-byte buffer, then
// render (bstr_printf) prints. So the formats, conversions, limits and
// error codes are the kernel's:
//
//   - conversions %d %i %u %x %X with optional l or ll, %c, %s, %%, and
//     pointers %p %pK %px %ps %pS %pB %pks %pus %pi4 %pI4 %pi6 %pI6;
//   - flags 0 + - and space, and a field width; no precision, no '#';
//   - every byte of the format printable ASCII or space, else -EINVAL; an
//     unknown conversion, a conversion without its argument, or %s / plain
//     %p followed by a letter or digit is -EINVAL;
//   - strings, characters and IP addresses share 512 bytes with the
//     numbers (4 or 8 bytes each): -ENOSPC when they do not fit.
//
// Differences: pointers print as their value (%p, %pK like %px) since
// there is nothing to hide from the process that owns the memory; symbols
// (%ps %pS %pB) are Go function names from the runtime, with the offset
// but without the size Linux appends ("name+0x1f"); other addresses print
// as 0x..., as Linux prints addresses outside any symbol.

const (
	maxBprintfBuf      = 1024 // MAX_BPRINTF_BUF: trace_printk's line
	maxBprintfBinArgs  = 512  // MAX_BPRINTF_BIN_ARGS: the prepared arguments
	maxBprintfVarargs  = 12   // MAX_BPRINTF_VARARGS
	maxTracePrintkArgs = 3    // MAX_TRACE_PRINTK_VARARGS
	fieldWidthMax      = 1<<23 - 1
)

// printf is the state of one formatting: prepared arguments and the
// output. It is large; formatters come from a pool.
type printf struct {
	env      *vm.Env
	printing bool // render, not prepare
	vals     [maxBprintfVarargs]uint64
	nargs    int
	text     [maxBprintfVarargs][]byte
	bin      [maxBprintfBinArgs]byte
	used     int // bytes of bin the conversions took, as the kernel counts them
	k        int // index of the conversion being handled
	out      sink
	line     [maxBprintfBuf + 1]byte // trace_printk's line and its newline
}

var printfs = sync.Pool{New: func() any { return new(printf) }}

func getPrintf(env *vm.Env) *printf {
	p := printfs.Get().(*printf)
	p.env, p.used, p.printing = env, 0, false
	return p
}

func putPrintf(p *printf) {
	p.env = nil
	p.text = [maxBprintfVarargs][]byte{}
	p.out = sink{}
	printfs.Put(p)
}

// prepare checks format against args and prepares them. It returns 0 or a
// negative errno.
func (p *printf) prepare(format []byte, args []uint64) uint64 {
	p.printing = false
	p.nargs = copy(p.vals[:], args)
	return p.walk(format, args)
}

// render prints format with the prepared arguments into dst and returns
// the length of the whole output, which may be more than len(dst).
func (p *printf) render(format []byte, dst []byte) int {
	p.printing = true
	p.out = sink{dst: dst}
	p.walk(format, p.vals[:p.nargs])
	return p.out.n
}

// spec is a conversion's flags and width.
type spec struct {
	left, plus, space, zero bool
	width                   int
}

// walk goes over the format once, preparing or printing.
func (p *printf) walk(format []byte, args []uint64) uint64 {
	at := func(i int) byte {
		if i < len(format) {
			return format[i]
		}
		return 0
	}
	p.k = 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if !isPrint(c) && !isSpace(c) {
			return retEINVAL
		}
		if c != '%' {
			p.out.put(c)
			continue
		}
		if at(i+1) == '%' {
			p.out.put('%')
			i++
			continue
		}
		if p.k >= len(args) {
			return retEINVAL
		}
		arg := args[p.k]
		i++
		var s spec
	flags:
		for {
			switch at(i) {
			case '0':
				s.zero = true
			case '+':
				s.plus = true
			case '-':
				s.left = true
			case ' ':
				s.space = true
			default:
				break flags
			}
			i++
		}
		for c := at(i); c >= '0' && c <= '9'; c = at(i) { // cannot start with 0: a flag
			s.width = min(s.width*10+int(c-'0'), fieldWidthMax)
			i++
		}
		var err uint64
		switch at(i) {
		case 'p':
			var skip int
			skip, err = p.pointer(at(i+1), at(i+2), at(i+3), arg, s)
			i += skip
		case 's':
			err = p.str(arg, at(i+1), s)
		case 'c':
			err = p.char(arg, s)
		default:
			size := 4
			for range 2 {
				if at(i) == 'l' {
					size = 8
					i++
				}
			}
			err = p.integer(arg, at(i), size, s)
		}
		if err != 0 {
			return err
		}
		p.k++
	}
	return 0
}

// take reserves n bytes of the prepared-argument buffer; false means
// -ENOSPC. Numbers and pointers are aligned to 4 bytes first, like the
// kernel's.
func (p *printf) take(n int, align bool) bool {
	if align {
		p.used = (p.used + 3) &^ 3
	}
	if maxBprintfBinArgs-p.used < n {
		return false
	}
	p.used += n
	return true
}

// integer is %d %i %u %x %X with size 4 (int) or 8 (long, long long).
func (p *printf) integer(arg uint64, conv byte, size int, s spec) uint64 {
	switch conv {
	case 'd', 'i', 'u', 'x', 'X':
	default:
		return retEINVAL
	}
	if !p.printing {
		if !p.take(size, true) {
			return retENOSPC
		}
		return 0
	}
	signed := conv == 'd' || conv == 'i'
	if size == 4 {
		if signed {
			arg = uint64(int64(int32(arg)))
		} else {
			arg = uint64(uint32(arg))
		}
	}
	base := uint64(10)
	if conv == 'x' || conv == 'X' {
		base = 16
	}
	p.out.number(arg, signed, base, conv == 'X', s)
	return 0
}

// char is %c.
func (p *printf) char(arg uint64, s spec) uint64 {
	if !p.printing {
		if !p.take(1, false) {
			return retENOSPC
		}
		return 0
	}
	if !s.left {
		p.out.pad(' ', s.width-1)
	}
	p.out.put(byte(arg))
	if s.left {
		p.out.pad(' ', s.width-1)
	}
	return 0
}

// str is %s, %pks and %pus: a string at any address, read fault-safely;
// an unreadable one prints as empty. next is the byte after the
// conversion, which must not continue it.
func (p *printf) str(arg uint64, next byte, s spec) uint64 {
	if next != 0 && !isSpace(next) && !isPunct(next) {
		return retEINVAL
	}
	if !p.printing {
		if p.used >= maxBprintfBinArgs {
			return retENOSPC
		}
		buf := p.bin[p.used:]
		n, ok := readString(p.env, buf, arg)
		if !ok || n == 0 {
			buf[0], n = 0, 1
		}
		p.text[p.k] = buf[:n-1]
		p.used += n
		return 0
	}
	p.out.text(p.text[p.k], s)
	return 0
}

// pointer is a %p conversion; n1, n2 and n3 are the bytes after the 'p'.
// It returns how many of them belong to the conversion.
func (p *printf) pointer(n1, n2, n3 byte, arg uint64, s spec) (int, uint64) {
	switch {
	case (n1 == 'k' || n1 == 'u') && n2 == 's':
		return 2, p.str(arg, n3, s)
	case n1 == 'K' || n1 == 'x' || n1 == 's' || n1 == 'S':
		if !p.printing {
			return 1, p.takePointer()
		}
		if n1 == 's' || n1 == 'S' {
			p.out.text(symbol(arg, n1 == 'S'), s)
		} else {
			p.out.pointer(arg, s)
		}
		return 1, 0
	case n1 == 0 || isSpace(n1) || isPunct(n1):
		if !p.printing {
			return 0, p.takePointer()
		}
		p.out.pointer(arg, s)
		return 0, 0
	case n1 == 'B':
		return 1, p.formatted(0, s, func() []byte { return symbol(arg, true) })
	case (n1 == 'i' || n1 == 'I') && (n2 == '4' || n2 == '6'):
		size := 4
		if n2 == '6' {
			size = 16
		}
		return 2, p.formatted(size, s, func() []byte {
			var ip [16]byte
			if !readMem(p.env, ip[:size], arg) {
				clear(ip[:])
			}
			return ipString(ip[:size], n1 == 'i')
		})
	}
	return 0, retEINVAL
}

func (p *printf) takePointer() uint64 {
	if !p.take(8, true) {
		return retENOSPC
	}
	return 0
}

// formatted handles the conversions whose text the kernel formats while
// preparing (%pB, IP addresses) and keeps, with a NUL, in the buffer;
// need is the room they need there first.
func (p *printf) formatted(need int, s spec, text func() []byte) uint64 {
	if p.printing {
		p.out.text(p.text[p.k], s)
		return 0
	}
	room := maxBprintfBinArgs - p.used
	if room < max(need, 1) {
		return retENOSPC
	}
	t := text()
	n := copy(p.bin[p.used:p.used+room-1], t) // snprintf: truncated, NUL-terminated
	p.text[p.k] = p.bin[p.used : p.used+n]
	p.used += len(t) + 1 // snprintf's result, even when truncated
	return 0
}

// sink receives rendered text: it keeps what fits in dst and counts
// everything, as vsnprintf does.
type sink struct {
	dst []byte
	n   int
}

func (o *sink) put(c byte) {
	if o.n < len(o.dst) {
		o.dst[o.n] = c
	}
	o.n++
}

func (o *sink) write(b []byte) {
	if o.n < len(o.dst) {
		copy(o.dst[o.n:], b)
	}
	o.n += len(b)
}

func (o *sink) pad(c byte, k int) {
	if k <= 0 {
		return
	}
	if o.n < len(o.dst) {
		d := o.dst[o.n:min(o.n+k, len(o.dst))]
		for i := range d {
			d[i] = c
		}
	}
	o.n += k
}

// text prints a string in a field (widen_string: spaces).
func (o *sink) text(b []byte, s spec) {
	if !s.left {
		o.pad(' ', s.width-len(b))
	}
	o.write(b)
	if s.left {
		o.pad(' ', s.width-len(b))
	}
}

// number prints like the kernel's number(): sign, zero or space padding,
// digits; '-' beats '0'.
func (o *sink) number(num uint64, signed bool, base uint64, upper bool, s spec) {
	width := s.width
	zero := s.zero && !s.left
	var sign byte
	if signed {
		switch {
		case int64(num) < 0:
			sign, num = '-', -num
		case s.plus:
			sign = '+'
		case s.space:
			sign = ' '
		}
		if sign != 0 {
			width--
		}
	}
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	var tmp [24]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = digits[num%base]
		num /= base
		if num == 0 {
			break
		}
	}
	width -= len(tmp) - i
	if !zero && !s.left {
		o.pad(' ', width)
		width = 0
	}
	if sign != 0 {
		o.put(sign)
	}
	if zero {
		o.pad('0', width)
		width = 0
	}
	o.write(tmp[i:])
	o.pad(' ', width)
}

// pointer prints an address like the kernel's %px: 16 zero-padded hex
// digits unless a width is given.
func (o *sink) pointer(addr uint64, s spec) {
	if s.width == 0 {
		s.width, s.zero = 16, true
	}
	o.number(addr, false, 16, false, s)
}

// symbol names a code address: a Go function with its offset (withOffset),
// else the address in hex.
func symbol(addr uint64, withOffset bool) []byte {
	if f := runtime.FuncForPC(uintptr(addr)); f != nil {
		b := []byte(f.Name())
		if withOffset {
			b = append(b, "+0x"...)
			b = strconv.AppendUint(b, addr-uint64(f.Entry()), 16)
		}
		return b
	}
	return strconv.AppendUint([]byte("0x"), addr, 16)
}

// ipString formats an IPv4 (4 bytes) or IPv6 (16 bytes) address like
// %pI4 ("1.2.3.4"), %pi4 ("001.002.003.004"), %pI6 (eight groups of four
// hex digits with colons) and %pi6 (32 hex digits).
func ipString(ip []byte, zeros bool) []byte {
	var b []byte
	if len(ip) == 4 {
		for i, v := range ip {
			if i > 0 {
				b = append(b, '.')
			}
			if zeros && v < 100 {
				b = append(b, '0')
				if v < 10 {
					b = append(b, '0')
				}
			}
			b = strconv.AppendUint(b, uint64(v), 10)
		}
		return b
	}
	const hex = "0123456789abcdef"
	for i, v := range ip {
		if !zeros && i > 0 && i%2 == 0 {
			b = append(b, ':')
		}
		b = append(b, hex[v>>4], hex[v&15])
	}
	return b
}

// Character classes of the kernel's ctype for ASCII.
func isPrint(c byte) bool { return c >= 0x20 && c < 0x7f }
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func isPunct(c byte) bool {
	return isPrint(c) && c != ' ' && !(c >= '0' && c <= '9') && !(c|0x20 >= 'a' && c|0x20 <= 'z')
}
