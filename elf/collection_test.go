package elf_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/maps"
)

// ctx is struct ctx of testdata/loader.bpf.c.
func ctx(value uint64, key uint32) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, value)
	binary.LittleEndian.PutUint32(b[8:], key)
	return b
}

func loadTest(t testing.TB, opts *elf.Options) *elf.Collection {
	t.Helper()
	if opts == nil {
		opts = &elf.Options{}
	}
	if opts.Helpers == nil {
		opts.Helpers = testHelpers()
	}
	coll, err := elf.Load("testdata/loader.bpf.o", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { coll.Close() })
	return coll
}

func run(t testing.TB, coll *elf.Collection, prog string, mem []byte) uint64 {
	t.Helper()
	p := coll.Program(prog)
	if p == nil {
		t.Fatalf("no program %s", prog)
	}
	r0, err := p.VM.Run(mem)
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return r0
}

func TestPrograms(t *testing.T) {
	coll := loadTest(t, nil)
	tests := []struct {
		prog string
		ctx  []byte
		want uint64
	}{
		{"calls", ctx(5, 0), 2*5 + 1 + 7 + 3}, // static + global function, .data + .data.custom
		{"globals", ctx(11, 0), 1},            // above the .rodata threshold
		{"globals", ctx(3, 0), 'e'},
		{"callback", ctx(0, 0), 0 + 1 + 2 + 3 + 4}, // bpf_loop with a callback
		{"dispatch", ctx(0, 0), 100},               // tail calls through .values
		{"dispatch", ctx(0, 1), 101},
		{"dispatch", ctx(0, 3), 99}, // empty slot: the caller goes on
	}
	for _, tt := range tests {
		if got := run(t, coll, tt.prog, tt.ctx); got != tt.want {
			t.Errorf("%s(%x) = %d, want %d", tt.prog, tt.ctx, got, tt.want)
		}
	}
}

func TestSections(t *testing.T) {
	coll := loadTest(t, nil)
	for _, name := range []string{"calls", "globals", "maps_prog", "callback", "dispatch", "tail_zero", "tail_one"} {
		if coll.Program(name) == nil {
			t.Errorf("userspace program %s not loaded", name)
		}
	}
	for _, name := range []string{"kernel_openat", "kernel_xdp"} {
		if coll.Program(name) != nil {
			t.Errorf("kernel program %s loaded into the VM", name)
		}
		if coll.KernelSpec == nil || coll.KernelSpec.Programs[name] == nil {
			t.Errorf("kernel program %s missing from KernelSpec", name)
		}
	}
	if len(coll.KernelSpec.Programs) != 2 {
		t.Errorf("KernelSpec has %d programs, want 2", len(coll.KernelSpec.Programs))
	}
	if coll.KernelSpec.Maps["counts"] == nil {
		t.Error("KernelSpec lacks the shared map counts")
	}
	if got := coll.Program("globals").Section; got != "uebpf/tracepoint/globals" {
		t.Errorf("section = %q", got)
	}

	all := loadTest(t, &elf.Options{AllPrograms: true})
	if all.Program("kernel_xdp") == nil {
		t.Fatal("AllPrograms did not load kernel_xdp")
	}
	if got := run(t, all, "kernel_xdp", nil); got != 2 {
		t.Errorf("kernel_xdp = %d, want 2", got)
	}
}

func TestSectionNames(t *testing.T) {
	tests := []struct {
		sec        string
		user       bool
		tracepoint string
	}{
		{"uebpf", true, ""},
		{"uebpf/tracepoint/http_request", true, "http_request"},
		{"uebpf/filter", true, ""},
		{"uebpfx", false, ""},
		{"tracepoint/syscalls/sys_enter_openat", false, ""},
		{"xdp", false, ""},
	}
	for _, tt := range tests {
		if got := elf.IsUserspaceSection(tt.sec); got != tt.user {
			t.Errorf("IsUserspaceSection(%q) = %v", tt.sec, got)
		}
		if name, _ := elf.TracepointName(tt.sec); name != tt.tracepoint {
			t.Errorf("TracepointName(%q) = %q", tt.sec, name)
		}
	}
}

func TestMaps(t *testing.T) {
	coll := loadTest(t, nil)
	tests := []struct {
		name       string
		typ        maps.Type
		key, value uint32
		max, flags uint32
		pinning    uint32
	}{
		{"counts", maps.Hash, 4, 8, 64, maps.FlagNoPrealloc, 1},
		{"slots", maps.Array, 4, 8, 4, 0, 0},
		{"legacy", maps.Array, 4, 8, 2, 0, 0},
		{"jump_table", maps.ProgramArray, 4, 4, 4, 0, 0},
		{".rodata", maps.Array, 4, 21, 1, maps.FlagRdOnlyProg, 0},
		{".data", maps.Array, 4, 8, 1, 0, 0},
		{".bss", maps.Array, 4, 8, 1, 0, 0},
		{".data.custom", maps.Array, 4, 8, 1, 0, 0},
	}
	for _, tt := range tests {
		m := coll.Map(tt.name)
		if m == nil {
			t.Errorf("map %s missing", tt.name)
			continue
		}
		s := m.Spec()
		if s.Type != tt.typ || s.KeySize != tt.key || s.ValueSize != tt.value ||
			s.MaxEntries != tt.max || s.Flags != tt.flags || s.Pinning != tt.pinning {
			t.Errorf("map %s: %+v", tt.name, s)
		}
	}

	for range 3 {
		run(t, coll, "maps_prog", ctx(0, 9))
	}
	var n uint64
	if err := coll.Map("counts").Lookup(uint32(9), &n); err != nil || n != 3 {
		t.Errorf("counts[9] = %d, %v; want 3", n, err)
	}
	if err := coll.Map("legacy").Lookup(uint32(1), &n); err != nil || n != 15 {
		t.Errorf("legacy[1] = %d, %v; want 15", n, err)
	}
	if err := coll.Map("slots").Lookup(uint32(1), &n); err != nil || n != 6 {
		t.Errorf("slots[1] = %d, %v; want 6", n, err)
	}
}

// The programs of a collection share map pointers: what one writes, the
// other reads, and the Go side sees.
func TestSharedMapTable(t *testing.T) {
	coll := loadTest(t, nil)
	a, b := coll.Program("calls").VM, coll.Program("maps_prog").VM
	if &a.Maps()[0] != &b.Maps()[0] {
		t.Error("programs of one collection have different map tables")
	}
}

func TestVariables(t *testing.T) {
	coll := loadTest(t, &elf.Options{Variables: map[string]any{"threshold": uint64(100)}})
	if got := run(t, coll, "globals", ctx(11, 0)); got != 'e' {
		t.Errorf("with threshold 100, globals(11) = %d, want 'e'", got)
	}
	var hits uint64
	if err := coll.Variables["hits"].Get(&hits); err != nil || hits != 1 {
		t.Errorf("hits = %d, %v; want 1", hits, err)
	}
	if err := coll.Variables["data_init"].Set(uint64(1000)); err != nil {
		t.Fatal(err)
	}
	if got := run(t, coll, "calls", ctx(0, 0)); got != 1+1000+3 {
		t.Errorf("after setting data_init, calls = %d", got)
	}
	err := coll.Variables["threshold"].Set(uint64(1))
	if !errors.Is(err, elf.ErrReadOnlyVariable) {
		t.Errorf("setting a constant after load: %v, want ErrReadOnlyVariable", err)
	}
	if !coll.Variables["threshold"].Constant() || coll.Variables["hits"].Constant() {
		t.Error("Constant() wrong")
	}
	var th uint64
	if err := coll.Variables["threshold"].Get(&th); err != nil || th != 100 {
		t.Errorf("threshold = %d, %v", th, err)
	}
	if err := coll.Variables["hits"].Set(uint32(1)); err == nil {
		t.Error("setting an 8-byte variable from a uint32 succeeded")
	}
}

func TestVariablesOnSpec(t *testing.T) {
	spec, err := elf.LoadSpec("testdata/loader.bpf.o")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables["threshold"].Set(uint64(2)); err != nil {
		t.Fatal(err)
	}
	coll, err := elf.NewCollection(spec, &elf.Options{Helpers: testHelpers()})
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	if got := run(t, coll, "globals", ctx(3, 0)); got != 1 {
		t.Errorf("with threshold 2, globals(3) = %d, want 1", got)
	}

	_, err = elf.NewCollection(spec, &elf.Options{Helpers: testHelpers(), Variables: map[string]any{"nope": 1}})
	if !errors.Is(err, elf.ErrUnknownVariable) {
		t.Errorf("unknown variable: %v", err)
	}
}

// The .rodata section is read-only to programs.
func TestReadOnlyData(t *testing.T) {
	coll := loadTest(t, nil)
	mem := coll.Map(".rodata").(maps.MemoryMap).Memory()
	if mem[0] == 0 && mem[1] == 0 {
		t.Skip("unexpected layout")
	}
	if !coll.Map(".rodata").ReadOnlyProg() {
		t.Error(".rodata is writable by programs")
	}
}

func TestSetTailCall(t *testing.T) {
	coll := loadTest(t, nil)
	if err := coll.SetTailCall("jump_table", 3, "tail_one"); err != nil {
		t.Fatal(err)
	}
	if got := run(t, coll, "dispatch", ctx(0, 3)); got != 101 {
		t.Errorf("dispatch(3) = %d, want 101", got)
	}
	if err := coll.SetTailCall("jump_table", 0, "kernel_xdp"); !errors.Is(err, elf.ErrMissingSymbol) {
		t.Errorf("tail call to a kernel program: %v", err)
	}
	if err := coll.SetTailCall("counts", 0, "tail_one"); err == nil {
		t.Error("SetTailCall on a hash map succeeded")
	}
}

func TestKernelSpecIsCiliumSpec(t *testing.T) {
	coll := loadTest(t, nil)
	var _ *ebpf.CollectionSpec = coll.KernelSpec
	if p := coll.KernelSpec.Programs["kernel_xdp"]; p.Type != ebpf.XDP {
		t.Errorf("kernel_xdp has type %v", p.Type)
	}
}
