package helpers_test

import (
	"testing"

	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Programs for tail calls share one Maps slice: 0 the program array, 1 an
// array counting entries.
func tailCallMaps(t *testing.T) (maps.ProgArrayMap, maps.Map, []vm.Map) {
	t.Helper()
	pa := newMap(t, maps.Spec{Name: "progs", Type: maps.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 4}).(maps.ProgArrayMap)
	count := newMap(t, maps.Spec{Name: "count", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	return pa, count, []vm.Map{pa, count}
}

// countAndTailCall adds 1 to count[0], then tail-calls progs[INDEX] and
// returns the helper's r0 if that fails.
const countAndTailCall = `
	mov %r6, %r1
	stw [%r10-4], 0
	lddw %r1, map_by_fd(1)
	mov %r2, %r10
	add %r2, -4
	call 1
	jeq %r0, 0, out
	mov %r1, 1
	lock add [%r0], %r1
	mov %r1, %r6
	lddw %r2, map_by_fd(0)
	mov %r3, INDEX
	call 12
out:
	exit`

func TestTailCall(t *testing.T) {
	pa, count, ms := tailCallMaps(t)
	loadIndex := func(index int) *vm.Program {
		return loadInsns(t, assemble(t, replace(countAndTailCall, "INDEX", itoa(index))), nil, ms...)
	}
	counted := func() uint64 {
		var n uint64
		if err := count.Lookup(uint32(0), &n); err != nil {
			t.Fatal(err)
		}
		count.Update(uint32(0), uint64(0), maps.UpdateAny)
		return n
	}
	leaf := loadInsns(t, assemble(t, "ldxdw %r0, [%r1]\nexit"), nil, ms...) // returns ctx[0]
	ctx := kv(77, 0)

	// progs[1] = leaf: entry -> leaf, which sees the entry's context.
	if err := pa.SetProgram(1, leaf); err != nil {
		t.Fatal(err)
	}
	if got := run(t, loadIndex(1), ctx); got != 77 {
		t.Errorf("tail call to leaf: r0 = %d, want 77", got)
	}
	if n := counted(); n != 1 {
		t.Errorf("entry ran %d times", n)
	}

	// Failures return to the caller with r0 < 0.
	for _, tc := range []struct {
		index int
		want  uint64
	}{
		{2, neg(2)},  // empty slot: -ENOENT
		{4, neg(2)},  // out of range
		{-1, neg(2)}, // 0xffffffff as a u32
	} {
		if got := run(t, loadIndex(tc.index), ctx); got != tc.want {
			t.Errorf("index %d: r0 = %#x, want %#x", tc.index, got, tc.want)
		}
		counted()
	}

	// A program that tail-calls itself runs 1 + 33 times, then its 34th
	// tail call fails with -ELOOP and the program returns that.
	self := loadIndex(0)
	if err := pa.SetProgram(0, self); err != nil {
		t.Fatal(err)
	}
	if got := run(t, self, ctx); got != neg(40) {
		t.Errorf("self tail call: r0 = %#x, want -ELOOP", got)
	}
	if n := counted(); n != 1+vm.MaxTailCalls {
		t.Errorf("self tail call ran %d times, want %d", n, 1+vm.MaxTailCalls)
	}
	// The count is per run.
	if run(t, self, ctx); counted() != 1+vm.MaxTailCalls {
		t.Error("second run: wrong count")
	}

	// Not a program array: -EINVAL.
	notPA := loadInsns(t, assemble(t, "lddw %r2, map_by_fd(1)\nmov %r3, 0\ncall 12\nexit"), nil, ms...)
	if got := run(t, notPA, ctx); got != neg(22) {
		t.Errorf("tail call through an array: %#x, want -EINVAL", got)
	}
	// A slot holding something else than a *vm.Program: -ENOENT.
	if err := pa.SetProgram(3, "not a program"); err != nil {
		t.Fatal(err)
	}
	if got := run(t, loadIndex(3), ctx); got != neg(2) {
		t.Errorf("tail call to a non-program: %#x, want -ENOENT", got)
	}
}
