package helpers_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/uebpf/uebpf/helpers"
)

func callNoArgs(t *testing.T, num int, cfg *helpers.Config) uint64 {
	t.Helper()
	return run(t, load(t, "call "+itoa(num)+"\nexit", helpers.Standard(cfg)), nil)
}

func TestGetPrandomU32(t *testing.T) {
	if got := callNoArgs(t, helpers.GetPrandomU32, &helpers.Config{Rand: func() uint32 { return 7 }}); got != 7 {
		t.Errorf("with Config.Rand: %d", got)
	}
	p := load(t, "call 7\nexit", nil)
	seen := map[uint64]bool{}
	for range 64 {
		v := run(t, p, nil)
		if v>>32 != 0 {
			t.Fatalf("%#x is not a u32", v)
		}
		seen[v] = true
	}
	if len(seen) < 60 {
		t.Errorf("%d distinct values out of 64", len(seen))
	}
}

func TestGetCurrentComm(t *testing.T) {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip(err)
	}
	name := bytes.TrimSuffix(b, []byte("\n"))
	// get_current_comm(ctx, size); the context is prefilled with 0xff.
	p := load(t, "mov %r2, %r2\ncall 16\nexit", nil)
	for _, size := range []int{1, 4, 16, 32} {
		ctx := bytes.Repeat([]byte{0xff}, size)
		if r0 := run(t, p, ctx); r0 != 0 {
			t.Errorf("size %d: r0 = %#x", size, r0)
		}
		want := make([]byte, size)
		copy(want[:size-1], name)
		if !bytes.Equal(ctx, want) {
			t.Errorf("size %d: %q, want %q", size, ctx, want)
		}
	}
	if r0 := run(t, load(t, "mov %r1, 8\nmov %r2, 16\ncall 16\nexit", nil), nil); r0 != neg(14) {
		t.Errorf("bad buffer: %#x, want -EFAULT", r0)
	}
	if r0 := run(t, load(t, "mov %r1, %r10\nadd %r1, -8\nmov %r2, 0\ncall 16\nexit", nil), nil); r0 != neg(22) {
		t.Errorf("size 0: %#x, want -EINVAL", r0)
	}
}
