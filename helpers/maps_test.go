package helpers_test

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// mapEngine runs map helper programs: the engines answer lookups and
// updates of hash maps themselves (vm.Helper.HashLookup, HashUpdate), and
// must return what the helpers return.
type mapEngine struct {
	name string
	// set is the helper set to load with.
	set vm.Helpers
	// exec runs p on env with ctx.
	exec func(t *testing.T, p *vm.Program, env *vm.Env) (uint64, error)
}

func mapEngines(t *testing.T) []mapEngine {
	helperOnly := helpers.Standard(nil)
	for n, h := range helperOnly {
		h.ArrayLookup, h.HashLookup, h.HashUpdate = false, false, false
		helperOnly[n] = h
	}
	interp := func(_ *testing.T, p *vm.Program, env *vm.Env) (uint64, error) { return p.Exec(env) }
	engines := []mapEngine{
		{"helpers", helperOnly, interp},
		{"interpreter", helpers.Standard(nil), interp},
	}
	if jit.Supported {
		engines = append(engines, mapEngine{"jit", helpers.Standard(nil), func(t *testing.T, p *vm.Program, env *vm.Env) (uint64, error) {
			jp, err := jit.Compile(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer jp.Close()
			return jp.Exec(env)
		}})
	}
	return engines
}

// Map helper programs take the key in the context's first 8 bytes and the
// value in the next 8 (r6 = ctx); map_by_fd(0) is the map under test.
const (
	// update(map, &ctx[0], &ctx[8], flags=imm)
	progUpdate = `
		mov %r6, %r1
		lddw %r1, map_by_fd(0)
		mov %r2, %r6
		mov %r3, %r6
		add %r3, 8
		mov %r4, FLAGS
		call 2
		exit`
	// lookup(map, &ctx[0]); r0 = the value's first 8 bytes, or 0xdead if none
	progLookup = `
		mov %r2, %r1
		lddw %r1, map_by_fd(0)
		call 1
		jeq %r0, 0, none
		ldxdw %r0, [%r0]
		exit
	none:
		mov %r0, 0xdead
		exit`
	// delete(map, &ctx[0])
	progDelete = `
		mov %r2, %r1
		lddw %r1, map_by_fd(0)
		call 3
		exit`
	// lookup(map, &ctx[0]) and add ctx[8] to the value in place
	progLookupAdd = `
		mov %r6, %r1
		mov %r2, %r1
		lddw %r1, map_by_fd(0)
		call 1
		jeq %r0, 0, none
		ldxdw %r1, [%r6+8]
		ldxdw %r2, [%r0]
		add %r2, %r1
		stxdw [%r0], %r2
		mov %r0, 0
		exit
	none:
		mov %r0, 0xdead
		exit`
)

func kv(k, v uint64) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint64(b, k)
	binary.NativeEndian.PutUint64(b[8:], v)
	return b
}

func withFlags(src string, flags int) string {
	return replace(src, "FLAGS", itoa(flags))
}

func TestMapHelpers(t *testing.T) {
	type step struct {
		prog  string
		key   uint64
		value uint64
		want  uint64
	}
	update := func(flags int) string { return withFlags(progUpdate, flags) }
	for _, tc := range []struct {
		name  string
		spec  maps.Spec
		steps []step
	}{
		{"hash", maps.Spec{Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 2}, []step{
			{progLookup, 1, 0, 0xdead},
			{update(0), 1, 10, 0},
			{progLookup, 1, 0, 10},
			{update(1), 1, 11, neg(int64(unix.EEXIST))}, // BPF_NOEXIST
			{update(2), 1, 12, 0},                       // BPF_EXIST
			{progLookup, 1, 0, 12},
			{update(2), 2, 20, neg(int64(unix.ENOENT))},
			{update(0), 2, 20, 0},
			{update(0), 3, 30, neg(int64(unix.E2BIG))}, // full
			{update(9), 3, 30, neg(int64(unix.EINVAL))},
			{progLookupAdd, 2, 5, 0},
			{progLookup, 2, 0, 25},
			{progDelete, 1, 0, 0},
			{progDelete, 1, 0, neg(int64(unix.ENOENT))},
			{progLookup, 1, 0, 0xdead},
		}},
		{"array", maps.Spec{Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 4}, []step{
			{progLookup, 3, 0, 0},
			{progLookup, 4, 0, 0xdead},
			{update(0), 3, 7, 0},
			{progLookup, 3, 0, 7},
			{update(1), 3, 7, neg(int64(unix.EEXIST))},
			{update(0), 4, 7, neg(int64(unix.E2BIG))},
			{progLookupAdd, 3, 1, 0},
			{progLookup, 3, 0, 8},
			{progDelete, 3, 0, neg(int64(unix.EINVAL))},
		}},
		{"lru", maps.Spec{Type: maps.LRUHash, KeySize: 8, ValueSize: 8, MaxEntries: 64}, []step{
			{update(0), 1, 10, 0},
			{progLookup, 1, 0, 10},
		}},
		{"percpu array", maps.Spec{Type: maps.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 2}, []step{
			{update(0), 1, 10, 0},
			{progLookup, 1, 0, 10}, // programs see their own CPU slot
			{progLookupAdd, 1, 1, 0},
			{progLookup, 1, 0, 11},
		}},
		{"percpu hash", maps.Spec{Type: maps.PerCPUHash, KeySize: 8, ValueSize: 8, MaxEntries: 2}, []step{
			{update(0), 1, 10, 0},
			{progLookup, 1, 0, 10},
		}},
		{"read-only", maps.Spec{Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 2, Flags: maps.FlagRdOnlyProg}, []step{
			{update(0), 1, 10, neg(int64(unix.EPERM))},
			{progDelete, 1, 0, neg(int64(unix.EPERM))},
		}},
		{"queue has no keys", maps.Spec{Type: maps.Queue, ValueSize: 8, MaxEntries: 2}, []step{
			{progLookup, 1, 0, 0xdead},
			{update(0), 1, 10, neg(int64(unix.EINVAL))},
			{progDelete, 1, 0, neg(int64(unix.EINVAL))},
		}},
	} {
		for _, engine := range mapEngines(t) {
			t.Run(tc.name+"/"+engine.name, func(t *testing.T) {
				m := newMap(t, tc.spec)
				env := vm.NewEnv() // one CPU slot for per-CPU maps
				progs := map[string]*vm.Program{}
				for i, s := range tc.steps {
					p := progs[s.prog]
					if p == nil {
						p = load(t, s.prog, engine.set, m)
						progs[s.prog] = p
					}
					env.Reset()
					env.SetContext(kv(s.key, s.value))
					if got, err := engine.exec(t, p, env); err != nil || got != s.want {
						t.Errorf("step %d: r0 = %#x (%v), want %#x", i, got, err, s.want)
					}
				}
			})
		}
	}
}

func TestMapHelpersReadOnlyValue(t *testing.T) {
	m := newMap(t, maps.Spec{Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1, Flags: maps.FlagRdOnlyProg})
	if err := m.Update(uint32(0), uint64(5), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	if got := run(t, load(t, progLookup, nil, m), kv(0, 0)); got != 5 {
		t.Errorf("lookup = %d, want 5", got)
	}
	_, err := load(t, progLookupAdd, nil, m).Run(kv(0, 1))
	if !errors.Is(err, vm.ErrReadOnly) && !errors.Is(err, vm.ErrMemoryAccess) {
		t.Errorf("write through a read-only value: %v, want a memory error", err)
	}
}

// A value written through the pointer lookup returned is the map's value.
func TestMapLookupWritesThrough(t *testing.T) {
	m := newMap(t, maps.Spec{Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 4})
	if err := m.Update(uint64(7), uint64(100), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	if got := run(t, load(t, progLookupAdd, nil, m), kv(7, 23)); got != 0 {
		t.Fatalf("r0 = %#x", got)
	}
	var v uint64
	if err := m.Lookup(uint64(7), &v); err != nil || v != 123 {
		t.Errorf("value %d (%v), want 123", v, err)
	}
}

// Bad arguments make the helpers fail, never crash.
func TestMapHelpersBadArguments(t *testing.T) {
	m := newMap(t, maps.Spec{Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 4})
	for _, tc := range []struct {
		name, src string
		want      uint64
	}{
		{"lookup bad key", "lddw %r1, map_by_fd(0)\nmov %r2, 64\ncall 1\nexit", 0},
		{"lookup not a map", "mov %r1, %r10\nmov %r2, %r10\nadd %r2, -8\ncall 1\nexit", 0},
		{"lookup map pointer + 1", "lddw %r1, map_by_fd(0)\nadd %r1, 1\nmov %r2, %r10\nadd %r2, -8\ncall 1\nexit", 0},
		{"lookup key past the stack", "lddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -4\ncall 1\nexit", 0},
		{"update bad key", "lddw %r1, map_by_fd(0)\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 0\ncall 2\nexit", neg(14)},
		{"update bad value", "lddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 1\nmov %r4, 0\ncall 2\nexit", neg(14)},
		{"update not a map", "mov %r1, 0\nmov %r2, %r10\nadd %r2, -8\nmov %r3, %r2\nmov %r4, 0\ncall 2\nexit", neg(22)},
		{"delete bad key", "lddw %r1, map_by_fd(0)\nmov %r2, 0\ncall 3\nexit", neg(14)},
		{"percpu lookup on a hash", "lddw %r1, map_by_fd(0)\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 0\ncall 195\nexit", 0},
	} {
		for _, engine := range mapEngines(t) {
			t.Run(tc.name+"/"+engine.name, func(t *testing.T) {
				p := load(t, "stdw [%r10-8], 0\n"+tc.src, engine.set, m)
				if got, err := engine.exec(t, p, vm.NewEnv()); err != nil || got != tc.want {
					t.Errorf("r0 = %#x (%v), want %#x", got, err, tc.want)
				}
			})
		}
	}
}

func TestMapLookupPercpuElem(t *testing.T) {
	m := newMap(t, maps.Spec{Type: maps.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	vals := make([]uint64, maps.PossibleCPUs())
	for i := range vals {
		vals[i] = uint64(100 + i)
	}
	if err := m.Update(uint32(0), vals, maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	src := `
		mov %r2, %r1
		ldxdw %r3, [%r1+8]
		lddw %r1, map_by_fd(0)
		call 195
		jeq %r0, 0, none
		ldxdw %r0, [%r0]
		exit
	none:
		mov %r0, 0xdead
		exit`
	p := load(t, src, nil, m)
	for cpu := range vals {
		if got := run(t, p, kv(0, uint64(cpu))); got != uint64(100+cpu) {
			t.Errorf("cpu %d: %d, want %d", cpu, got, 100+cpu)
		}
	}
	if got := run(t, p, kv(0, uint64(len(vals)))); got != 0xdead {
		t.Errorf("cpu out of range: %#x, want none", got)
	}
}

func TestQueueHelpers(t *testing.T) {
	// push(&ctx[8], flags=ctx[0]); pop or peek into ctx[8] and return it
	push := `
		mov %r6, %r1
		ldxdw %r3, [%r6]
		mov %r2, %r6
		add %r2, 8
		lddw %r1, map_by_fd(0)
		call 87
		exit`
	get := func(num int) string {
		return `
		mov %r6, %r1
		stdw [%r6+8], -1
		mov %r2, %r6
		add %r2, 8
		lddw %r1, map_by_fd(0)
		call ` + itoa(num) + `
		jne %r0, 0, out
		ldxdw %r0, [%r6+8]
	out:
		exit`
	}
	t.Run("queue", func(t *testing.T) {
		q := newMap(t, maps.Spec{Type: maps.Queue, ValueSize: 8, MaxEntries: 2})
		pu, pop, peek := load(t, push, nil, q), load(t, get(helpers.MapPopElem), nil, q), load(t, get(helpers.MapPeekElem), nil, q)
		ctx := kv(0, 1)
		for _, s := range []struct {
			p          *vm.Program
			flags, val uint64
			want       uint64
		}{
			{pop, 0, 0, neg(2)}, // empty: -ENOENT
			{pu, 0, 1, 0},
			{pu, 0, 2, 0},
			{pu, 0, 3, neg(7)}, // full: -E2BIG
			{pu, 2, 3, 0},      // BPF_EXIST drops the oldest
			{pu, 1, 4, neg(22)},
			{peek, 0, 0, 2},
			{pop, 0, 0, 2},
			{pop, 0, 0, 3},
			{pop, 0, 0, neg(2)},
		} {
			binary.NativeEndian.PutUint64(ctx, s.flags)
			binary.NativeEndian.PutUint64(ctx[8:], s.val)
			if got := run(t, s.p, ctx); got != s.want {
				t.Errorf("r0 = %#x, want %#x", got, s.want)
			}
		}
		// A failed pop zeroes the destination, like Linux.
		if v := binary.NativeEndian.Uint64(ctx[8:]); v != 0 {
			t.Errorf("value after a failed pop: %#x, want 0", v)
		}
	})
	t.Run("stack", func(t *testing.T) {
		s := newMap(t, maps.Spec{Type: maps.Stack, ValueSize: 8, MaxEntries: 4})
		pu, pop := load(t, push, nil, s), load(t, get(helpers.MapPopElem), nil, s)
		for v := uint64(1); v <= 3; v++ {
			run(t, pu, kv(0, v))
		}
		for want := uint64(3); want >= 1; want-- {
			if got := run(t, pop, kv(0, 0)); got != want {
				t.Errorf("pop = %d, want %d", got, want)
			}
		}
	})
	t.Run("not a queue", func(t *testing.T) {
		h := newMap(t, maps.Spec{Type: maps.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 4})
		if got := run(t, load(t, push, nil, h), kv(0, 1)); got != neg(22) {
			t.Errorf("push on a hash: %#x, want -EINVAL", got)
		}
		if got := run(t, load(t, get(helpers.MapPopElem), nil, h), kv(0, 1)); got != neg(22) {
			t.Errorf("pop on a hash: %#x, want -EINVAL", got)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		q := newMap(t, maps.Spec{Type: maps.Queue, ValueSize: 8, MaxEntries: 2, Flags: maps.FlagRdOnlyProg})
		if err := q.Update(nil, uint64(9), maps.UpdateAny); err != nil {
			t.Fatal(err)
		}
		if got := run(t, load(t, push, nil, q), kv(0, 1)); got != neg(1) {
			t.Errorf("push: %#x, want -EPERM", got)
		}
		if got := run(t, load(t, get(helpers.MapPopElem), nil, q), kv(0, 1)); got != neg(1) {
			t.Errorf("pop: %#x, want -EPERM", got)
		}
		if got := run(t, load(t, get(helpers.MapPeekElem), nil, q), kv(0, 1)); got != 9 {
			t.Errorf("peek: %#x, want 9", got)
		}
	})
	t.Run("bad value pointer", func(t *testing.T) {
		q := newMap(t, maps.Spec{Type: maps.Queue, ValueSize: 8, MaxEntries: 2})
		src := "lddw %r1, map_by_fd(0)\nmov %r2, 16\nmov %r3, 0\ncall NUM\nexit"
		for _, num := range []int{helpers.MapPushElem, helpers.MapPopElem, helpers.MapPeekElem} {
			if got := run(t, load(t, replace(src, "NUM", itoa(num)), nil, q), nil); got != neg(14) {
				t.Errorf("helper %d: %#x, want -EFAULT", num, got)
			}
		}
	})
}

// More maps than the helpers' cache of map views has slots, used in turn:
// every lookup still finds its own map's value.
func TestManyMaps(t *testing.T) {
	const n = 600
	ms := make([]vm.Map, n)
	for i := range ms {
		typ := maps.Hash
		if i%2 == 0 {
			typ = maps.Array
		}
		m := newMap(t, maps.Spec{Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: 1})
		if err := m.Update(uint32(0), uint64(i), maps.UpdateAny); err != nil {
			t.Fatal(err)
		}
		ms[i] = m
	}
	for round := range 2 {
		for i := range ms {
			src := "stw [%r10-4], 0\nlddw %r1, map_by_fd(" + itoa(i) + ")\nmov %r2, %r10\nadd %r2, -4\ncall 1\nldxdw %r0, [%r0]\nexit"
			if got := run(t, load(t, src, nil, ms...), nil); got != uint64(i) {
				t.Fatalf("round %d map %d: %d", round, i, got)
			}
		}
	}
}

// A loop of lookups over a hash map's elements hands the run the same
// values again and again: the run's region list grows with the distinct
// values, not with the calls (a loop of a second grew the heap by
// hundreds of megabytes before the list had an index).
func TestLookupLoopMemory(t *testing.T) {
	m, err := maps.New(&maps.Spec{Name: "h", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint32(1000) {
		if err := m.(maps.Map).Update(binary.LittleEndian.AppendUint32(nil, i), make([]byte, 8), 0); err != nil {
			t.Fatal(err)
		}
	}
	p := load(t, `
	mov %r6, 0
loop:
	mov %r1, %r6
	mod %r1, 1000
	stxw [%r10-4], %r1
	lddw %r1, map_by_fd(0)
	mov %r2, %r10
	add %r2, -4
	call 1
	jeq %r0, 0, out
	add %r6, 1
	jlt %r6, 300000, loop
out:
	mov %r0, %r6
	exit`, helpers.Standard(nil), m.(vm.Map))
	for _, e := range ringEngines() {
		t.Run(e.name, func(t *testing.T) {
			env := vm.NewEnv()
			env.SetTimeout(-1)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r0, err := e.run(t, p, env)
			runtime.ReadMemStats(&after)
			if err != nil || r0 != 300000 {
				t.Fatalf("run: r0 = %d, %v", r0, err)
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
				t.Errorf("300,000 lookups of 1,000 elements allocated %d KB", grown>>10)
			}
		})
	}
}
