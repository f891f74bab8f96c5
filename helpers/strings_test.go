package helpers_test

import (
	"encoding/binary"
	"testing"
)

func TestStrncmp(t *testing.T) {
	// strncmp(&ctx[16], ctx[0], &ctx[64])
	p := load(t, `
		mov %r6, %r1
		ldxdw %r2, [%r6]
		mov %r1, %r6
		add %r1, 16
		mov %r3, %r6
		add %r3, 64
		call 182
		exit`, nil)
	const minus1 = ^uint64(0)
	for _, tc := range []struct {
		s1, s2 string
		n      uint64
		want   uint64
	}{
		{"abc", "abc", 4, 0},
		{"abc", "abd", 4, minus1},
		{"abd", "abc", 4, 1},
		{"abcX", "abcY", 3, 0},
		{"ab", "abc", 8, minus1},
		{"abc", "ab", 8, 1},
		{"\xff", "a", 2, 1}, // unsigned bytes
		{"x", "y", 0, 0},
		{"", "", 1, 0},
		{"same\x00junk", "same\x00else", 10, 0},
		{"abc", "abc", 1<<32 + 2, 0}, // the size is a u32
	} {
		ctx := make([]byte, 128)
		binary.NativeEndian.PutUint64(ctx, tc.n)
		copy(ctx[16:48], tc.s1)
		copy(ctx[64:], tc.s2)
		if got := run(t, p, ctx); got != tc.want {
			t.Errorf("strncmp(%q, %q, %d) = %#x, want %#x", tc.s1, tc.s2, tc.n, got, tc.want)
		}
	}
	// s2 running past the memory the run may read, and a bad s1.
	for _, src := range []string{
		"lddw %r1, 0x6161616161616161\nstxdw [%r10-8], %r1\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -2\ncall 182\nexit",
		"mov %r1, 8\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -8\ncall 182\nexit",
	} {
		if got := run(t, load(t, src, nil), nil); got != neg(14) {
			t.Errorf("%s\n= %#x, want -EFAULT", src, got)
		}
	}
}
