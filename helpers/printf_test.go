package helpers_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/helpers"
)

// Context layout of the printf programs.
const (
	pfFormat  = 0    // the format, NUL-terminated
	pfData    = 256  // the u64 argument array
	pfStrings = 1024 // string and IP arguments, 1024 bytes each
	pfOut     = 4096 // snprintf's output
	pfSize    = 6144 // u32 output size (snprintf) or format size (trace_printk)
	pfDataLen = 6152 // u32 data_len
	pfCtxLen  = 6160
)

// printf arguments besides numbers.
type (
	str  string // a NUL-terminated string placed in the context
	mem  []byte // bytes placed in the context (an IP address)
	addr uint64 // an address as is
)

// printfCtx builds the context for format and args and returns it with
// the number of arguments.
func printfCtx(format string, args []any) ([]byte, int) {
	ctx := make([]byte, pfCtxLen)
	base := uint64(uintptr(unsafe.Pointer(&ctx[0])))
	copy(ctx[pfFormat:], format) // followed by NUL
	for i, a := range args {
		var v uint64
		switch a := a.(type) {
		case int:
			v = uint64(a)
		case rune:
			v = uint64(a)
		case uint64:
			v = a
		case str:
			off := pfStrings + 1024*i
			copy(ctx[off:], a)
			v = base + uint64(off)
		case mem:
			off := pfStrings + 1024*i
			copy(ctx[off:], a)
			v = base + uint64(off)
		case addr:
			v = uint64(a)
		default:
			panic(a)
		}
		binary.NativeEndian.PutUint64(ctx[pfData+8*i:], v)
	}
	return ctx, len(args)
}

const progSnprintf = `
	mov %r6, %r1
	mov %r1, %r6
	add %r1, 4096
	ldxw %r2, [%r6+6144]
	mov %r3, %r6
	mov %r4, %r6
	add %r4, 256
	ldxw %r5, [%r6+6152]
	call 165
	exit`

func goFunc() {}

func TestSnprintf(t *testing.T) {
	p := load(t, progSnprintf, nil)
	long := strings.Repeat("x", 300)
	fnAddr := uint64(reflect.ValueOf(goFunc).Pointer())
	const einval, enospc = -22, -28
	for _, tc := range []struct {
		format string
		args   []any
		want   string
		ret    int64 // expected r0: the output size with NUL, or -errno
	}{
		{"hello", nil, "hello", 6},
		{"%d", []any{-1}, "-1", 3},
		{"%d", []any{0xffffffff}, "-1", 3},
		{"%i", []any{42}, "42", 3},
		{"%ld", []any{0xffffffff}, "4294967295", 11},
		{"%lld", []any{-1}, "-1", 3},
		{"%u", []any{-1}, "4294967295", 11},
		{"%lu", []any{-1}, "18446744073709551615", 21},
		{"%llu", []any{1 << 40}, "1099511627776", 14},
		{"%x %X", []any{255, 255}, "ff FF", 6},
		{"%lx", []any{1 << 40}, "10000000000", 12},
		{"[%5d]", []any{42}, "[   42]", 8},
		{"[%-5d]", []any{42}, "[42   ]", 8},
		{"[%05d]", []any{-42}, "[-0042]", 8},
		{"[%+d]", []any{42}, "[+42]", 6},
		{"[% d]", []any{42}, "[ 42]", 6},
		{"[%-05d]", []any{42}, "[42   ]", 8},
		{"[%+u]", []any{42}, "[42]", 5},
		{"[%08x]", []any{0xbeef}, "[0000beef]", 11},
		{"%c%c", []any{'h', 'i'}, "hi", 3},
		{"[%3c]", []any{'A'}, "[  A]", 6},
		{"[%-3c]", []any{'A'}, "[A  ]", 6},
		{"%s!", []any{str("abc")}, "abc!", 5},
		{"[%5s]", []any{str("abc")}, "[  abc]", 8},
		{"[%-5s]", []any{str("abc")}, "[abc  ]", 8},
		{"[%s]", []any{addr(8)}, "[]", 3},
		{"%pks %pus.", []any{str("k"), str("u")}, "k u.", 5},
		{"100%%", nil, "100%", 5},
		{"%%d%%", nil, "%d%", 4},
		{"%p", []any{0x1234}, "0000000000001234", 17},
		{"%px,%pK", []any{0x1234, 0x5678}, "0000000000001234,0000000000005678", 34},
		{"[%8p]", []any{0x1234}, "[    1234]", 11},
		{"%pI4", []any{mem{192, 168, 1, 2}}, "192.168.1.2", 12},
		{"%pi4", []any{mem{10, 0, 0, 1}}, "010.000.000.001", 16},
		{"%pI6", []any{mem{0x20, 0x01, 0x0d, 0xb8, 15: 1}}, "2001:0db8:0000:0000:0000:0000:0000:0001", 40},
		{"%pi6", []any{mem{0x20, 0x01, 0x0d, 0xb8, 15: 1}}, "20010db8000000000000000000000001", 33},
		{"%pI4", []any{addr(8)}, "0.0.0.0", 8},
		{"%ps", []any{fnAddr}, "github.com/uebpf/uebpf/helpers_test.goFunc", 43},
		{"%ps", []any{8}, "0x8", 4},
		{"%d%d%d%d%d%d%d%d%d%d%d%d", []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "123456789101112", 16},
		{"%s|%s", []any{str(long), str(long)}, (long + "|" + long[:210])[:63], 512},
		{"%100d", []any{1}, strings.Repeat(" ", 63), 101},

		{"%d", nil, "", einval},
		{"%d %d", []any{1}, "", einval},
		{"%o", []any{1}, "", einval},
		{"%.2d", []any{1}, "", einval},
		{"%#x", []any{1}, "", einval},
		{"%hd", []any{1}, "", einval},
		{"%lc", []any{1}, "", einval},
		{"a\x01", nil, "", einval},
		{"\xc3\xa9", nil, "", einval},
		{"%", []any{1}, "", einval},
		{"%pa", []any{1}, "", einval},
		{"%pI5", []any{1}, "", einval},
		{"%sx", []any{str("a")}, "", einval},
		{"%s%s%s", []any{str(long), str(long), str(long)}, "", enospc},
	} {
		ctx, n := printfCtx(tc.format, tc.args)
		binary.NativeEndian.PutUint32(ctx[pfSize:], 64)
		binary.NativeEndian.PutUint32(ctx[pfDataLen:], uint32(8*n))
		copy(ctx[pfOut:pfOut+64], bytes.Repeat([]byte{0xee}, 64))
		got := run(t, p, ctx)
		if got != uint64(tc.ret) {
			t.Errorf("%q: r0 = %d, want %d", tc.format, int64(got), tc.ret)
			continue
		}
		if tc.ret < 0 {
			if ctx[pfOut] != 0xee {
				t.Errorf("%q: failed but wrote output", tc.format)
			}
			continue
		}
		out := ctx[pfOut : pfOut+64]
		i := bytes.IndexByte(out, 0)
		if i < 0 || string(out[:i]) != tc.want {
			t.Errorf("%q: %q, want %q", tc.format, out[:max(i, 0)], tc.want)
		}
	}
}

func TestSnprintfSizes(t *testing.T) {
	p := load(t, progSnprintf, nil)
	for _, tc := range []struct {
		size    uint32
		dataLen uint32
		want    string
		ret     int64
	}{
		{4, 8, "hel", 6},
		{1, 8, "", 6},
		{0, 8, "\xee", 6}, // measures, writes nothing
		{64, 12, "\xee", -22},
		{64, 104, "\xee", -22},
	} {
		ctx, _ := printfCtx("hello", []any{1})
		binary.NativeEndian.PutUint32(ctx[pfSize:], tc.size)
		binary.NativeEndian.PutUint32(ctx[pfDataLen:], tc.dataLen)
		ctx[pfOut] = 0xee
		if got := run(t, p, ctx); got != uint64(tc.ret) {
			t.Errorf("size %d data_len %d: r0 = %d, want %d", tc.size, tc.dataLen, int64(got), tc.ret)
		}
		if got := string(ctx[pfOut : pfOut+len(tc.want)]); got != tc.want {
			t.Errorf("size %d: output %q, want %q", tc.size, got, tc.want)
		}
	}
	// Bad pointers: output, format and data.
	for _, src := range []string{
		"mov %r1, 8\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 0\nmov %r5, 0\ncall 165\nexit",
		"mov %r1, %r10\nadd %r1, -16\nmov %r2, 8\nmov %r3, 8\nmov %r4, 0\nmov %r5, 0\ncall 165\nexit",
		"mov %r1, %r10\nadd %r1, -16\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 16\nmov %r5, 8\ncall 165\nexit",
		"mov %r1, %r10\nadd %r1, -16\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 0\nmov %r5, 8\ncall 165\nexit",
	} {
		got := run(t, load(t, "stdw [%r10-8], 0\n"+src, nil), nil)
		if got != neg(14) && got != neg(22) {
			t.Errorf("%s\n: r0 = %d, want -EFAULT or -EINVAL", src, int64(got))
		}
	}
}

const progTracePrintk = `
	mov %r6, %r1
	mov %r1, %r6
	ldxw %r2, [%r6+6144]
	ldxdw %r3, [%r6+256]
	ldxdw %r4, [%r6+264]
	ldxdw %r5, [%r6+272]
	call 6
	exit`

const progTraceVprintk = `
	mov %r6, %r1
	mov %r1, %r6
	ldxw %r2, [%r6+6144]
	mov %r3, %r6
	add %r3, 256
	ldxw %r4, [%r6+6152]
	call 177
	exit`

func TestTracePrintk(t *testing.T) {
	var out bytes.Buffer
	set := helpers.Standard(&helpers.Config{Output: &out})
	printk, vprintk := load(t, progTracePrintk, set), load(t, progTraceVprintk, set)
	for _, tc := range []struct {
		format  string
		size    int // format size; 0: len+1
		args    []any
		vprintk bool
		line    string
		ret     int64
	}{
		{"hello\n", 0, nil, false, "hello\n", 6},
		{"no newline", 0, nil, false, "no newline\n", 10},
		{"x=%d y=%s z=%c", 0, []any{-5, str("why"), 'z'}, false, "x=-5 y=why z=z\n", 14},
		{"%d %d %d %d", 0, []any{1, 2, 3, 4}, false, "", -22}, // four conversions, three arguments
		{"%d %d %d %d %d", 0, []any{1, 2, 3, 4, 5}, true, "1 2 3 4 5\n", 9},
		{"abc", 3, nil, false, "", -22},        // no NUL within fmt_size
		{"ab\x00cd", 0, nil, false, "ab\n", 2}, // the format ends at its NUL
		{"%2000d", 0, []any{7}, false, strings.Repeat(" ", 1023) + "\n", 2000},
		{"a%cb", 0, []any{0}, false, "a\n", 3}, // the line is a C string
	} {
		out.Reset()
		ctx, n := printfCtx(tc.format, tc.args)
		size := tc.size
		if size == 0 {
			size = len(tc.format) + 1
		}
		binary.NativeEndian.PutUint32(ctx[pfSize:], uint32(size))
		binary.NativeEndian.PutUint32(ctx[pfDataLen:], uint32(8*n))
		p := printk
		if tc.vprintk {
			p = vprintk
		}
		if got := run(t, p, ctx); got != uint64(tc.ret) {
			t.Errorf("%q: r0 = %d, want %d", tc.format, int64(got), tc.ret)
		}
		if out.String() != tc.line {
			t.Errorf("%q: line %q, want %q", tc.format, out.String(), tc.line)
		}
	}
	// The default Output discards.
	ctx, _ := printfCtx("x", nil)
	binary.NativeEndian.PutUint32(ctx[pfSize:], 2)
	if got := run(t, load(t, progTracePrintk, nil), ctx); got != 1 {
		t.Errorf("discarded: r0 = %d", got)
	}
}
