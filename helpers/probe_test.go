package helpers_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/helpers"
)

// progProbe calls helper NUM(&ctx[16], ctx[8] (size), ctx[0] (address)).
const progProbe = `
	mov %r6, %r1
	ldxdw %r3, [%r6]
	ldxdw %r2, [%r6+8]
	mov %r1, %r6
	add %r1, 16
	call NUM
	exit`

// unmapped returns an address with nothing mapped at it, and a readable
// page followed by an unmapped one.
func unmapped(t *testing.T) (hole uint64, page []byte) {
	t.Helper()
	ps := uintptr(unix.Getpagesize())
	base, err := unix.MmapPtr(-1, 0, nil, 3*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.MunmapPtr(unsafe.Add(base, ps), ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.MunmapPtr(base, ps)
		unix.MunmapPtr(unsafe.Add(base, 2*ps), ps)
	})
	return uint64(uintptr(base) + ps), unsafe.Slice((*byte)(base), ps)
}

var outside = []byte("memory outside the program's regions\x00")

func TestProbeReadUser(t *testing.T) {
	hole, page := unmapped(t)
	copy(page, "page")
	at := func(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
	for _, num := range []int{helpers.ProbeReadUser, helpers.ProbeRead} {
		p := load(t, replace(progProbe, "NUM", itoa(num)), nil)
		for _, tc := range []struct {
			name string
			addr uint64
			size uint64
			want []byte // nil: -EFAULT, destination zeroed
		}{
			{"outside the regions", at(outside), 6, []byte("memory")},
			{"mmap", at(page), 4, []byte("page")},
			{"null", 0, 8, nil},
			{"low", 1, 8, nil},
			{"unmapped", hole, 8, nil},
			{"into unmapped", hole - 4, 8, nil},
			{"kernel", 0xffff_8000_0000_0000, 8, nil},
			{"wraps", ^uint64(0) - 3, 8, nil},
			{"size 0", 0, 0, []byte{}},
		} {
			ctx := make([]byte, 16+64)
			binary.NativeEndian.PutUint64(ctx, tc.addr)
			binary.NativeEndian.PutUint64(ctx[8:], tc.size)
			copy(ctx[16:], bytes.Repeat([]byte{0xaa}, 64))
			got := run(t, p, ctx)
			dst := ctx[16 : 16+tc.size]
			if tc.want == nil {
				if got != neg(14) || !bytes.Equal(dst, make([]byte, tc.size)) {
					t.Errorf("%d %s: r0 = %#x, dst %x; want -EFAULT, zeroes", num, tc.name, got, dst)
				}
				continue
			}
			if got != 0 || !bytes.Equal(dst, tc.want) {
				t.Errorf("%d %s: r0 = %#x, dst %q; want 0, %q", num, tc.name, got, dst, tc.want)
			}
		}
	}
	// A destination the program may not write: -EFAULT. Sizes beyond the
	// stack's once slipped through vm's stack check.
	for _, src := range []string{
		"mov %r1, 16\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -8\ncall 112\nexit",
		"lddw %r1, 0x3030303030303030\nmov %r2, 0x30303030\nmov %r3, 0x30\ncall 112\nexit",
		"mov %r1, %r10\nadd %r1, -8\nmov %r2, 0x10000\nmov %r3, 0x30\ncall 112\nexit",
	} {
		if got := run(t, load(t, src, nil), nil); got != neg(14) {
			t.Errorf("bad destination: %#x\n%s", got, src)
		}
	}
}

func TestProbeReadUserStr(t *testing.T) {
	hole, page := unmapped(t)
	ps := len(page)
	copy(page[ps-4:], "end\x00") // a string ending at the last byte before the hole
	_, page2 := unmapped(t)
	copy(page2[ps-2:], "xy") // a string running into the hole
	at := func(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
	for _, num := range []int{helpers.ProbeReadUserStr, helpers.ProbeReadStr} {
		p := load(t, replace(progProbe, "NUM", itoa(num)), nil)
		for _, tc := range []struct {
			name string
			addr uint64
			size uint64
			want string // "": -EFAULT, destination zeroed
			ret  uint64
		}{
			{"outside", at(outside), 64, "memory outside the program's regions\x00", 37},
			{"truncated", at(outside), 7, "memory\x00", 7},
			{"size 1", at(outside), 1, "\x00", 1},
			{"before a hole", at(page[ps-4:]), 64, "end\x00", 4},
			{"into a hole", at(page2[ps-2:]), 64, "", neg(14)},
			{"hole", hole, 64, "", neg(14)},
			{"null", 0, 64, "", neg(14)},
			{"size 0", 0, 0, "", 0},
		} {
			ctx := make([]byte, 16+64)
			binary.NativeEndian.PutUint64(ctx, tc.addr)
			binary.NativeEndian.PutUint64(ctx[8:], tc.size)
			copy(ctx[16:], bytes.Repeat([]byte{0xaa}, 64))
			got := run(t, p, ctx)
			if got != tc.ret {
				t.Errorf("%d %s: r0 = %#x, want %#x", num, tc.name, got, tc.ret)
			}
			dst := ctx[16 : 16+tc.size]
			want := []byte(tc.want)
			if tc.want == "" {
				want = make([]byte, tc.size)
			}
			if !bytes.HasPrefix(dst, want) {
				t.Errorf("%d %s: dst %q, want %q", num, tc.name, dst, want)
			}
			if rest := ctx[16+len(want):]; tc.want != "" && rest[0] != 0xaa {
				t.Errorf("%d %s: wrote past the NUL", num, tc.name)
			}
		}
	}
	// From memory the program may read (the context), across a page of
	// regions: the fast path.
	ctx := make([]byte, 16+64+5000)
	copy(ctx[16+64+4090:], "straddles\x00")
	binary.NativeEndian.PutUint64(ctx, uint64(uintptr(unsafe.Pointer(&ctx[16+64+4090]))))
	binary.NativeEndian.PutUint64(ctx[8:], 64)
	if got := run(t, load(t, replace(progProbe, "NUM", "114"), nil), ctx); got != 10 || string(ctx[16:26]) != "straddles\x00" {
		t.Errorf("from the context: r0 = %d, %q", got, ctx[16:26])
	}
}
