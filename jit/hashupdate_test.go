package jit_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/internal/enginebench"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Context of updateProgram: the key (a little-endian word) at 0, the value
// at 8, the flags at 80.
const (
	updKeyAt, updValueAt, updFlagsAt = 0, 8, 80
	updCtxSize                       = 88
)

// updateProgram returns a program that calls bpf_map_update_elem on map 0
// with the context's key and value copied to the stack (whole stores:
// a 3-byte key is stored as 4 bytes) (or, with
// keyInCtx, the key left in the context) and the context's flags, and
// returns r0.
func updateProgram(keySize, valueSize int, keyInCtx bool) []asm.Instruction {
	var b strings.Builder
	size := map[int]string{1: "b", 2: "h", 3: "w", 4: "w", 8: "dw"}[keySize]
	b.WriteString("mov %r6, %r1\n")
	fmt.Fprintf(&b, "ldxdw %%r7, [%%r6+%d]\nstx%s [%%r10-8], %%r7\n", updKeyAt, size)
	for off := 0; off < valueSize; off += 8 {
		fmt.Fprintf(&b, "ldxdw %%r7, [%%r6+%d]\nstxdw [%%r10%d], %%r7\n", updValueAt+off, -88+off)
	}
	b.WriteString("lddw %r1, 0\n")
	if keyInCtx {
		fmt.Fprintf(&b, "mov %%r2, %%r6\nadd %%r2, %d\n", updKeyAt)
	} else {
		b.WriteString("mov %r2, %r10\nadd %r2, -8\n")
	}
	fmt.Fprintf(&b, "mov %%r3, %%r10\nadd %%r3, -88\nldxdw %%r4, [%%r6+%d]\ncall 2\nexit", updFlagsAt)
	insns := asm.MustAssemble(b.String())
	for i := range insns {
		if insns[i].Opcode == asm.OpLDDW {
			insns[i].Src = asm.PseudoMapFD
			break
		}
	}
	return insns
}

// updateCtx returns the context of an update of key with a value whose
// byte i is seed+i.
func updateCtx(key uint64, seed byte, flags uint64) []byte {
	ctx := make([]byte, updCtxSize)
	binary.LittleEndian.PutUint64(ctx[updKeyAt:], key)
	for i := range updFlagsAt - updValueAt {
		ctx[updValueAt+i] = seed + byte(i)
	}
	binary.LittleEndian.PutUint64(ctx[updFlagsAt:], flags)
	return ctx
}

// loadUpdate loads updateProgram over m, with the standard helpers.
func loadUpdate(t testing.TB, m maps.Map, valueSize int, keyInCtx bool) *vm.Program {
	t.Helper()
	insns := updateProgram(int(m.KeySize()), valueSize, keyInCtx)
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{m}}, &vm.Options{Helpers: helpers.Standard(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return vp
}

// compileTrapped compiles vp with o and jit.TrapSlowPaths: its inline
// updates fail where they would leave for Go.
func compileTrapped(t *testing.T, vp *vm.Program, o jit.Options) *jit.Program {
	t.Helper()
	p, err := jit.Compile(vp, ptr(jit.TrapSlowPaths(o)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// homeSlot is the home slot of key k in a map with layout l.
func homeSlot(l engine.HashLayout, k uint64) uint32 {
	return uint32(engine.HashSmall(l.HashStart, k) >> 32 * uint64(l.NumSlots) >> 32)
}

// hashEntries returns m's keys and values, sorted, as one byte string.
func hashEntries(m maps.Map) []byte {
	var entries [][]byte
	for k := range mapKeys(m) {
		value := make([]byte, m.ValueSize())
		if err := m.Lookup(k, value); err != nil {
			panic(err) // no other goroutine uses m
		}
		entries = append(entries, append(k, value...))
	}
	slices.SortFunc(entries, bytes.Compare)
	return bytes.Join(entries, nil)
}

// TestInlineHashUpdate: updates of existing keys of hash maps are answered
// in generated code, with the map's own result; everything else (a missing
// key, flags the inline path leaves to Go, maps and calls it does not
// take) ends as on the interpreter. Each case runs the same sequence of
// updates on the interpreter and in every JIT mode, and the maps end up
// with the same entries.
func TestInlineHashUpdate(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	type update struct {
		key   uint64
		flags uint64
	}
	// A sequence that inserts, overwrites, and tries every flag.
	seq := []update{{1, 0}, {1, 0}, {2, 2}, {2, 0}, {2, 2}, {1, 1}, {3, 1}, {3, 3}, {3, 0}, {1, 2}, {3, 0}}
	cases := []struct {
		name               string
		typ                maps.Type
		keySize, valueSize int
		keyInCtx           bool
		entries            uint32
	}{
		{name: "key 4 value 8", typ: maps.Hash, keySize: 4, valueSize: 8, entries: 16},
		{name: "key 1 value 1", typ: maps.Hash, keySize: 1, valueSize: 1, entries: 16},
		{name: "key 2 value 3", typ: maps.Hash, keySize: 2, valueSize: 3, entries: 16},
		{name: "key 8 value 12", typ: maps.Hash, keySize: 8, valueSize: 12, entries: 16},
		{name: "key 8 value 64", typ: maps.Hash, keySize: 8, valueSize: 64, entries: 16},
		{name: "value 72 (helper)", typ: maps.Hash, keySize: 4, valueSize: 72, entries: 16},
		{name: "key in context", typ: maps.Hash, keySize: 4, valueSize: 8, keyInCtx: true, entries: 16},
		{name: "full map", typ: maps.Hash, keySize: 4, valueSize: 8, entries: 2},
		{name: "lru", typ: maps.LRUHash, keySize: 4, valueSize: 8, entries: 16},
		{name: "full lru", typ: maps.LRUHash, keySize: 4, valueSize: 8, entries: 2},
		{name: "key 3 (helper)", typ: maps.Hash, keySize: 3, valueSize: 8, entries: 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each engine gets a new map with the same hash seed, so that
			// LRU evictions, which depend on the map's history and
			// layout, meet the same map.
			load := func() (*vm.Program, maps.Map) {
				m, err := maps.New(&maps.Spec{Name: "h", Type: tc.typ, KeySize: uint32(tc.keySize), ValueSize: uint32(tc.valueSize), MaxEntries: tc.entries, Flags: maps.FlagZeroSeed})
				if err != nil {
					t.Fatal(err)
				}
				return loadUpdate(t, m, (tc.valueSize+7)&^7, tc.keyInCtx), m
			}
			run := func(m maps.Map, exec func(*vm.Env) (uint64, error)) (results []string, entries []byte) {
				env := vm.NewEnv()
				for i, u := range seq {
					env.SetContext(updateCtx(u.key, byte(16*i), u.flags))
					r0, err := exec(env)
					results = append(results, fmt.Sprintf("%#x %v", r0, err))
				}
				return results, hashEntries(m)
			}
			vp, m := load()
			wantResults, wantEntries := run(m, vp.Exec)
			for _, o := range allModes {
				vp, m := load()
				p, err := jit.Compile(vp, &o)
				if err != nil {
					t.Fatal(err)
				}
				got, entries := run(m, p.Exec)
				p.Close()
				if !slices.Equal(got, wantResults) || !bytes.Equal(entries, wantEntries) {
					t.Fatalf("%+v:\njit         %v %x\ninterpreter %v %x", o, got, entries, wantResults, wantEntries)
				}
			}
		})
	}
}

// mapKeys yields m's keys.
func mapKeys(m maps.Map) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		var key any
		for {
			next := make([]byte, m.KeySize())
			if m.NextKey(key, next) != nil || !yield(next) {
				return
			}
			key = next
		}
	}
}

// TestInlineHashUpdateTaken shows which calls the generated code answers:
// with jit.TrapSlowPaths an inline update fails where it would leave for
// Go. An update of a present key then completes only if answered inline,
// and one of a missing key fails only if the inline path was tried.
func TestInlineHashUpdateTaken(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	skipNoInline(t)
	newKeyMap := func(t *testing.T, keySize, entries uint32, typ maps.Type, flags uint32) maps.Map {
		m, err := maps.New(&maps.Spec{Name: "h", Type: typ, KeySize: keySize, ValueSize: 8, MaxEntries: entries, Flags: flags})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	newMap := func(t *testing.T, entries uint32, typ maps.Type, flags uint32) maps.Map {
		return newKeyMap(t, 4, entries, typ, flags)
	}
	// What a mode does with a call: answer it inline, try and leave for
	// Go, or leave it to the helper without trying.
	const (
		inline = "inline"
		tried  = "tried"
		helper = "helper"
	)
	cases := []struct {
		name              string
		m                 maps.Map
		keyInCtx          bool
		flags             uint64
		checked, verified string
	}{
		{name: "stack key", m: newMap(t, 16, maps.Hash, 0), checked: inline, verified: inline},
		{name: "1-byte key", m: newKeyMap(t, 1, 16, maps.Hash, 0), checked: inline, verified: inline},
		{name: "2-byte key", m: newKeyMap(t, 2, 16, maps.Hash, 0), checked: inline, verified: inline},
		{name: "8-byte key", m: newKeyMap(t, 8, 16, maps.Hash, 0), checked: inline, verified: inline},
		{name: "3-byte key", m: newKeyMap(t, 3, 16, maps.Hash, 0), checked: helper, verified: helper},
		{name: "BPF_EXIST", m: newMap(t, 16, maps.Hash, 0), flags: 2, checked: inline, verified: inline},
		{name: "BPF_NOEXIST", m: newMap(t, 16, maps.Hash, 0), flags: 1, checked: tried, verified: tried},
		{name: "bad flags", m: newMap(t, 16, maps.Hash, 0), flags: 4, checked: tried, verified: tried},
		{name: "context key", m: newMap(t, 16, maps.Hash, 0), keyInCtx: true, checked: helper, verified: inline},
		{name: "large map", m: newMap(t, 1<<20, maps.Hash, 0), checked: inline, verified: inline},
		{name: "lru", m: newMap(t, 16, maps.LRUHash, 0), checked: inline, verified: inline},
		{name: "not preallocated", m: newMap(t, 16, maps.Hash, maps.FlagNoPrealloc), checked: helper, verified: helper},
		{name: "read-only", m: newMap(t, 16, maps.Hash, maps.FlagRdOnlyProg), checked: helper, verified: helper},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keySize := int(tc.m.KeySize())
			vp := loadUpdate(t, tc.m, 8, tc.keyInCtx)
			key := func(k uint64) []byte { return binary.LittleEndian.AppendUint64(nil, k)[:keySize] }
			for _, o := range []jit.Options{{}, {Unchecked: true}} {
				want := tc.checked
				if o.Unchecked {
					want = tc.verified
				}
				p := compileTrapped(t, vp, o)
				if err := tc.m.Update(key(7), uint64(1), maps.UpdateAny); err != nil {
					t.Fatal(err)
				}
				env := vm.NewEnv()
				env.SetContext(updateCtx(7, 0x40, tc.flags))
				_, errPresent := p.Exec(env)
				env.SetContext(updateCtx(8, 0x40, tc.flags))
				_, errMissing := p.Exec(env)
				p.Close()
				got := helper
				switch trapped := func(err error) bool { return errors.Is(err, vm.ErrBudgetExceeded) }; {
				case errPresent == nil && trapped(errMissing):
					got = inline
				case trapped(errPresent) && trapped(errMissing):
					got = tried
				case errPresent != nil || errMissing != nil:
					got = fmt.Sprintf("present key: %v, missing key: %v", errPresent, errMissing)
				}
				if got != want {
					t.Errorf("%+v: want %s, got %s", o, want, got)
				}
				var v uint64
				if err := tc.m.Lookup(key(7), &v); err != nil || got == inline && v != 0x4746454443424140 {
					t.Errorf("%+v: value %#x, %v", o, v, err)
				}
				tc.m.Delete(key(8))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// skipNoInline skips a test of inline hash updates where the back end has
// none (see jit.Inline).
func skipNoInline(t *testing.T) {
	t.Helper()
	if !jit.Inline {
		t.Skip("no inline hash updates in this back end")
	}
}

// TestInlineHashUpdateLRU: an inline update of an LRU map's element marks
// it used, as the map's own update does, so that a full map evicts the
// other element. Either of two elements is updated in turn: without the
// mark, the clock would evict the same one both times.
func TestInlineHashUpdateLRU(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	for _, o := range []jit.Options{{}, {Unchecked: true}} {
		for used := range uint32(2) {
			m, err := maps.New(&maps.Spec{Name: "h", Type: maps.LRUHash, KeySize: 4, ValueSize: 8, MaxEntries: 2})
			if err != nil {
				t.Fatal(err)
			}
			for k := range uint32(2) {
				if err := m.Update(k, uint64(0), maps.UpdateAny); err != nil {
					t.Fatal(err)
				}
			}
			p := compileTrapped(t, loadUpdate(t, m, 8, false), o)
			env := vm.NewEnv()
			env.SetContext(updateCtx(uint64(used), 1, 0))
			_, err = p.Exec(env)
			p.Close()
			if err != nil {
				t.Fatalf("%+v: %v", o, err)
			}
			if err := m.Update(uint32(2), uint64(0), maps.UpdateAny); err != nil { // evicts one
				t.Fatal(err)
			}
			var v uint64
			if err := m.Lookup(used, &v); err != nil || v != 0x0807060504030201 {
				t.Errorf("%+v: the updated element %d: %#x, %v", o, used, v, err)
			}
			if err := m.Lookup(1-used, &v); !errors.Is(err, maps.ErrKeyNotExist) {
				t.Errorf("%+v: the other element %d was not evicted: %v", o, 1-used, err)
			}
		}
	}
}

// TestInlineHashUpdateLock: the inline path takes the key's stripe lock
// where engine.HashLayout says it is, leaves a held lock to Go without
// touching it, and releases the lock it took.
func TestInlineHashUpdateLock(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	skipNoInline(t)
	m, err := maps.New(&maps.Spec{Name: "h", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 16})
	if err != nil {
		t.Fatal(err)
	}
	const key = 7
	if err := m.Update(uint32(key), uint64(0), maps.UpdateAny); err != nil {
		t.Fatal(err)
	}
	l, _ := engine.HashLayoutOf(engine.HashOf(m))
	addr := l.Locks + uintptr(homeSlot(l, key)&l.LockMask)*uintptr(l.LockStride)
	lock := *(*unsafe.Pointer)(unsafe.Pointer(&addr)) // the map keeps its locks alive
	vp := loadUpdate(t, m, 8, false)
	for _, o := range []jit.Options{{}, {Unchecked: true}} {
		p := compileTrapped(t, vp, o)
		env := vm.NewEnv()
		env.SetContext(updateCtx(key, 1, 0))
		atomic.StoreUint32((*uint32)(lock), 1) // held by someone else
		_, errHeld := p.Exec(env)
		stillHeld := atomic.LoadUint32((*uint32)(lock))
		atomic.StoreUint32((*uint32)(lock), 0)
		_, errFree := p.Exec(env)
		p.Close()
		if !errors.Is(errHeld, vm.ErrBudgetExceeded) || stillHeld != 1 {
			t.Errorf("%+v: with the lock held: %v, lock word %d after", o, errHeld, stillHeld)
		}
		if errFree != nil || atomic.LoadUint32((*uint32)(lock)) != 0 {
			t.Errorf("%+v: with the lock free: %v, lock word %d after", o, errFree, atomic.LoadUint32((*uint32)(lock)))
		}
	}
}

// TestInlineHashUpdateProbes: keys away from their home slot (probes that
// pass other keys, tombstones and the end of the table) are found inline;
// the map has slots for 4 keys and holds up to 3.
func TestInlineHashUpdateProbes(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	skipNoInline(t)
	m, err := maps.New(&maps.Spec{Name: "h", Type: maps.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4, Flags: maps.FlagZeroSeed})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := engine.HashLayoutOf(engine.HashOf(m))
	// Keys homed in the last slot: the second and third wrap around.
	var keys []uint32
	for k := uint32(0); len(keys) < 3; k++ {
		if homeSlot(l, uint64(k)) == l.NumSlots-1 {
			keys = append(keys, k)
		}
	}
	vp := loadUpdate(t, m, 8, false)
	for _, o := range []jit.Options{{}, {Unchecked: true}} {
		p := compileTrapped(t, vp, o)
		for _, k := range keys {
			if err := m.Update(k, uint64(0), maps.UpdateAny); err != nil {
				t.Fatal(err)
			}
		}
		// A tombstone before the last key.
		if err := m.Delete(keys[1]); err != nil {
			t.Fatal(err)
		}
		env := vm.NewEnv()
		for i, k := range []uint32{keys[0], keys[2]} {
			env.SetContext(updateCtx(uint64(k), byte(i+1), 0))
			if _, err := p.Exec(env); err != nil {
				t.Fatalf("%+v: key %d (home %d): %v", o, k, homeSlot(l, uint64(k)), err)
			}
			var v uint64
			if err := m.Lookup(k, &v); err != nil || byte(v) != byte(i+1) {
				t.Fatalf("%+v: key %d: value %#x, %v", o, k, v, err)
			}
		}
		// The deleted key, past the last, is not found: Go inserts it.
		env.SetContext(updateCtx(uint64(keys[1]), 9, 0))
		if _, err := p.Exec(env); !errors.Is(err, vm.ErrBudgetExceeded) {
			t.Fatalf("%+v: deleted key: %v", o, err)
		}
		p.Close()
		for _, k := range keys {
			m.Delete(k)
		}
	}
}

// TestInlineHashUpdateConcurrent runs inline updates from several
// goroutines while Go deletes and inserts keys of the same map (in an LRU
// map with fewer entries than keys, inserts also evict), for the race
// detector and the map's consistency: at the end every key is there once
// and its value starts with it. (That the inline path takes the lock is
// TestInlineHashUpdateLock's: a race needs a window of a few
// instructions.)
func TestInlineHashUpdateConcurrent(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	for _, tc := range []struct {
		typ     maps.Type
		entries uint32
	}{{maps.Hash, 64}, {maps.LRUHash, 32}} {
		t.Run(tc.typ.String(), func(t *testing.T) { concurrentUpdates(t, tc.typ, tc.entries) })
	}
}

func concurrentUpdates(t *testing.T, typ maps.Type, entries uint32) {
	const keys = 48
	m, err := maps.New(&maps.Spec{Name: "h", Type: typ, KeySize: 4, ValueSize: 16, MaxEntries: entries})
	if err != nil {
		t.Fatal(err)
	}
	p, err := jit.Compile(loadUpdate(t, m, 16, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	value := func(k uint32, n uint64) []byte {
		return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(k)), n)
	}
	var runners, mutator sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for g := range 3 {
		runners.Go(func() {
			env := vm.NewEnv()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			ctx := make([]byte, updCtxSize)
			env.SetContext(ctx)
			for i := range 100000 {
				k := uint32(rng.IntN(keys))
				binary.LittleEndian.PutUint64(ctx[updKeyAt:], uint64(k))
				copy(ctx[updValueAt:], value(k, uint64(i)))
				if _, err := p.Exec(env); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	mutator.Go(func() {
		rng := rand.New(rand.NewPCG(99, 1))
		for {
			select {
			case <-stop:
				return
			default:
			}
			k := uint32(rng.IntN(keys))
			if rng.IntN(2) == 0 {
				m.Delete(k)
			} else if err := m.Update(k, value(k, 0), maps.UpdateAny); err != nil {
				errs <- err
				return
			}
		}
	})
	runners.Wait()
	close(stop)
	mutator.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	for k := range mapKeys(m) {
		key := binary.LittleEndian.Uint32(k)
		var v [16]byte
		if err := m.Lookup(key, v[:]); err != nil {
			t.Fatal(err)
		}
		if seen[key] || binary.LittleEndian.Uint64(v[:]) != uint64(key) {
			t.Fatalf("key %d: value %x (seen before: %v)", key, v, seen[key])
		}
		seen[key] = true
	}
}

// TestGeneratedUpdatesInline: the fuzz generator's hash updates are
// answered inline in both safety modes, so FuzzJITvsInterpreter compares
// inline updates with the interpreter's.
func TestGeneratedUpdatesInline(t *testing.T) {
	programs := seedPrograms(t)
	checked, verified := 0, 0
	for _, vp := range programs {
		if jit.InlineHashUpdates(vp, jit.Options{}) > 0 {
			checked++
		}
		if jit.InlineHashUpdates(vp, jit.Options{Unchecked: true}) > 0 {
			verified++
		}
	}
	if checked < len(programs)/8 || verified < len(programs)/8 {
		t.Errorf("of %d generated programs, %d (checked) and %d (verified) have inline hash updates, want at least 1/8", len(programs), checked, verified)
	}
	if testing.Verbose() {
		t.Logf("%d programs: %d checked, %d verified with inline hash updates", len(programs), checked, verified)
	}
}

// BenchmarkHashUpdate runs 1,000 updates of present keys (a 1,024-entry
// hash map, as the benchmark set's map_hash_update) answered inline,
// checked and unchecked, in an LRU hash map, and through the helper exit
// (the key in the context, which checked code leaves to Go), per update.
func BenchmarkHashUpdate(b *testing.B) {
	newMap := func(typ maps.Type) maps.Map {
		m, err := maps.New(&maps.Spec{Name: "h", Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: 1024})
		if err != nil {
			b.Fatal(err)
		}
		for k := range uint32(1000) {
			if err := m.Update(k, uint64(0), maps.UpdateAny); err != nil {
				b.Fatal(err)
			}
		}
		return m
	}
	load := func(m maps.Map, keySource string) *vm.Program {
		insns := asm.MustAssemble(`
			mov %r9, %r1
			mov %r6, 0
		loop:
			stxw [%r9+0], %r6
			stxw [%r10-4], %r6
			stxdw [%r10-16], %r6
			lddw %r1, 0
			` + keySource + `
			mov %r3, %r10
			add %r3, -16
			mov %r4, 0
			call 2
			add %r6, 1
			jne %r6, 1000, loop
			exit`)
		for i := range insns {
			if insns[i].Opcode == asm.OpLDDW {
				insns[i].Src = asm.PseudoMapFD
			}
		}
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{m}}, &vm.Options{Helpers: helpers.Standard(nil)})
		if err != nil {
			b.Fatal(err)
		}
		return vp
	}
	const stackKey, ctxKey = "mov %r2, %r10\nadd %r2, -4", "mov %r2, %r9"
	hash, lru := newMap(maps.Hash), newMap(maps.LRUHash)
	stack, ctx, lruStack := load(hash, stackKey), load(hash, ctxKey), load(lru, stackKey)
	for _, bc := range []struct {
		name   string
		vp     *vm.Program
		opts   jit.Options
		inline int
	}{
		{"inline/checked", stack, jit.Options{}, 1},
		{"inline/unchecked", stack, jit.Options{Unchecked: true}, 1},
		{"inline/lru", lruStack, jit.Options{}, 1},
		{"exit/checked", ctx, jit.Options{}, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if n := jit.InlineHashUpdates(bc.vp, bc.opts); n != bc.inline {
				b.Fatalf("%d inline updates, want %d", n, bc.inline)
			}
			p := compile(b, bc.vp, bc.opts)
			env := vm.NewEnv()
			env.SetContext(make([]byte, 8))
			stop := enginebench.CPU(b)
			for b.Loop() {
				if _, err := p.Exec(env); err != nil {
					b.Fatal(err)
				}
			}
			stop()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/update")
		})
	}
}

// TestSetHashUpdateInline: the benchmark set's map_hash_update, as clang
// builds it, gets its update answered inline in both safety modes.
func TestSetHashUpdateInline(t *testing.T) {
	found := false
	setPrograms(t, func(name string, vp *vm.Program) {
		if name != "map_hash_update" {
			return
		}
		found = true
		for _, o := range []jit.Options{{}, {Unchecked: true}} {
			if n := jit.InlineHashUpdates(vp, o); n != 1 {
				t.Errorf("%+v: %d inline updates, want 1", o, n)
			}
		}
	})
	if !found {
		t.Fatal("no map_hash_update in the benchmark set")
	}
}
