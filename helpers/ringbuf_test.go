package helpers_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

func ringBuf(t *testing.T, size uint32) (maps.RingBufMap, *maps.Reader) {
	t.Helper()
	m := newMap(t, maps.Spec{Name: "rb", Type: maps.RingBuf, MaxEntries: size})
	rd, err := maps.NewReader(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return m.(maps.RingBufMap), rd
}

func readAll(t *testing.T, rd *maps.Reader) []string {
	t.Helper()
	var got []string
	rd.SetDeadline(time.Now())
	for {
		rec, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(rec.RawSample))
	}
}

func TestRingbufOutput(t *testing.T) {
	rb, rd := ringBuf(t, 4096)
	// ringbuf_output(rb, ctx, ctx_len, ctx[0] as flags? no: flags 0)
	p := load(t, `
		mov %r3, %r2
		mov %r2, %r1
		lddw %r1, map_by_fd(0)
		mov %r4, 0
		call 130
		exit`, nil, rb)
	for _, s := range []string{"one", "two", "three"} {
		if r0 := run(t, p, []byte(s)); r0 != 0 {
			t.Errorf("output %q: r0 = %#x", s, r0)
		}
	}
	if got := readAll(t, rd); len(got) != 3 || got[0] != "one" || got[2] != "three" {
		t.Errorf("read %q", got)
	}
	// A record that does not fit: -EAGAIN and a drop.
	if r0 := run(t, p, make([]byte, 5000)); r0 != neg(11) {
		t.Errorf("too big: r0 = %#x, want -EAGAIN", r0)
	}
	if rb.Dropped() != 1 {
		t.Errorf("dropped %d", rb.Dropped())
	}
	// Bad flags, bad data, not a ring buffer.
	for _, tc := range []struct{ name, src string }{
		{"flags", "lddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 8\nmov %r4, 4\ncall 130\nexit"},
		{"data", "lddw %r1, map_by_fd(0)\nmov %r2, 64\nmov %r3, 8\nmov %r4, 0\ncall 130\nexit"},
		{"map", "mov %r1, %r10\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 8\nmov %r4, 0\ncall 130\nexit"},
	} {
		if r0 := run(t, load(t, "stdw [%r10-8], 0\n"+tc.src, nil, rb), nil); r0 != neg(22) && r0 != neg(14) {
			t.Errorf("%s: r0 = %#x, want an error", tc.name, r0)
		}
	}
	if r0 := run(t, load(t, "stdw [%r10-8], 0\nlddw %r1, map_by_fd(0)\nmov %r2, 0\nmov %r3, 0\nmov %r4, 0\ncall 130\nexit", nil, rb), nil); r0 != 0 {
		t.Errorf("empty record: r0 = %#x", r0)
	}
	if got := readAll(t, rd); len(got) != 1 || got[0] != "" {
		t.Errorf("read %q, want one empty record", got)
	}
}

// progReserve reserves ctx[0] bytes, fills them with 'a'+i, then submits
// (ctx[8] == 0) or discards; it returns 1 if the reservation failed.
const progReserve = `
	mov %r6, %r1
	lddw %r1, map_by_fd(0)
	ldxdw %r2, [%r6]
	mov %r3, 0
	call 131
	jne %r0, 0, got
	mov %r0, 1
	exit
got:
	mov %r7, %r0
	ldxdw %r8, [%r6]
	mov %r1, 0
fill:
	jge %r1, %r8, done
	mov %r2, %r7
	add %r2, %r1
	mov %r3, %r1
	add %r3, 0x61
	stxb [%r2], %r3
	add %r1, 1
	ja fill
done:
	mov %r1, %r7
	mov %r2, 0
	ldxdw %r3, [%r6+8]
	jne %r3, 0, discard
	call 132
	mov %r0, 0
	exit
discard:
	call 133
	mov %r0, 0
	exit`

func TestRingbufReserve(t *testing.T) {
	rb, rd := ringBuf(t, 4096)
	p := load(t, progReserve, nil, rb)
	for _, tc := range []struct {
		size, discard uint64
		want          uint64
	}{
		{3, 0, 0},
		{5, 1, 0}, // discarded: the reader skips it
		{2, 0, 0},
		{5000, 0, 1}, // does not fit
		{0, 0, 1},    // zero bytes: NULL (see the package documentation)
	} {
		if r0 := run(t, p, kv(tc.size, tc.discard)); r0 != tc.want {
			t.Errorf("size %d: r0 = %d, want %d", tc.size, r0, tc.want)
		}
	}
	if got := readAll(t, rd); len(got) != 2 || got[0] != "abc" || got[1] != "ab" {
		t.Errorf("read %q, want [abc ab]", got)
	}
	// Flags must be 0.
	if r0 := run(t, load(t, "lddw %r1, map_by_fd(0)\nmov %r2, 8\nmov %r3, 1\ncall 131\nexit", nil, rb), nil); r0 != 0 {
		t.Errorf("reserve with flags: %#x, want NULL", r0)
	}
	// Submit and discard fail the run on pointers that are not records of
	// the run (Linux's verifier rejects such programs).
	for _, src := range []string{
		"mov %r1, 0\nmov %r2, 0\ncall 132\nexit",
		"mov %r1, 4096\nmov %r2, 0\ncall 133\nexit",
		"mov %r1, %r10\nadd %r1, -8\nmov %r2, 0\ncall 132\nexit",
		"lddw %r1, 0x7fff00001000\nmov %r2, 0\ncall 133\nexit",
	} {
		_, err := load(t, src, nil, rb).Run(nil)
		var re *vm.RunError
		if !errors.As(err, &re) || !errors.Is(err, maps.ErrInvalid) {
			t.Errorf("%s: %v, want a *vm.RunError wrapping maps.ErrInvalid", src, err)
		}
	}
}

func TestRingbufQuery(t *testing.T) {
	rb, _ := ringBuf(t, 4096)
	q := func(flag int) uint64 {
		return run(t, load(t, "lddw %r1, map_by_fd(0)\nmov %r2, "+itoa(flag)+"\ncall 134\nexit", nil, rb), nil)
	}
	if got := q(1); got != 4096 {
		t.Errorf("ring size %d", got)
	}
	run(t, load(t, progReserve, nil, rb), kv(3, 0))
	if avail, prod := q(0), q(3); avail != 16 || prod != 16 {
		t.Errorf("avail %d prod %d, want 16 16", avail, prod)
	}
	if got := q(9); got != 0 {
		t.Errorf("unknown flag: %d", got)
	}
	if got := run(t, load(t, "mov %r1, %r10\nmov %r2, 1\ncall 134\nexit", nil, rb), nil); got != 0 {
		t.Errorf("not a ring buffer: %d", got)
	}
}
