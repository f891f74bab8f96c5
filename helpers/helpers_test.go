package helpers_test

import (
	"errors"
	"testing"

	ciliumasm "github.com/cilium/ebpf/asm"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Test harness: programs are assembled from text and run by the
// interpreter with the standard helpers; maps are referenced by
// map_by_fd(i), i being the index in ms.

func assemble(t testing.TB, src string) []asm.Instruction {
	t.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatalf("assemble: %v\n%s", err, src)
	}
	return insns
}

func load(t testing.TB, src string, set vm.Helpers, ms ...vm.Map) *vm.Program {
	t.Helper()
	return loadInsns(t, assemble(t, src), set, ms...)
}

func loadInsns(t testing.TB, insns []asm.Instruction, set vm.Helpers, ms ...vm.Map) *vm.Program {
	t.Helper()
	if set == nil {
		set = helpers.Standard(nil)
	}
	p, err := vm.Load(&vm.ProgramSpec{Name: t.Name(), Instructions: insns, Maps: ms}, &vm.Options{Helpers: set})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

// withCallback assembles main followed by callback and points the first
// lddw of a function address (code_addr) in main at the callback.
func withCallback(t testing.TB, main, callback string) []asm.Instruction {
	t.Helper()
	m := assemble(t, main)
	c := assemble(t, callback)
	for i, in := range m {
		if in.Opcode == asm.OpLDDW && in.Src == asm.PseudoFunc {
			m[i].Imm = int32(len(m) - i - 1)
			return append(m, c...)
		}
	}
	t.Fatal("no code_addr lddw in main")
	return nil
}

func run(t testing.TB, p *vm.Program, ctx []byte) uint64 {
	t.Helper()
	r0, err := p.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r0
}

// exec runs p on env, so that runs share the Env's CPU slot.
func exec(t testing.TB, p *vm.Program, env *vm.Env, ctx []byte) uint64 {
	t.Helper()
	env.Reset()
	env.SetContext(ctx)
	r0, err := p.Exec(env)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r0
}

func newMap(t testing.TB, spec maps.Spec) maps.Map {
	t.Helper()
	if spec.Name == "" {
		spec.Name = "m"
	}
	m, err := maps.New(&spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func neg(e int64) uint64 { return uint64(-e) }

func TestNumbersAreLinux(t *testing.T) {
	for num, fn := range map[int32]ciliumasm.BuiltinFunc{
		helpers.MapLookupElem:       ciliumasm.FnMapLookupElem,
		helpers.MapUpdateElem:       ciliumasm.FnMapUpdateElem,
		helpers.MapDeleteElem:       ciliumasm.FnMapDeleteElem,
		helpers.ProbeRead:           ciliumasm.FnProbeRead,
		helpers.KtimeGetNs:          ciliumasm.FnKtimeGetNs,
		helpers.TracePrintk:         ciliumasm.FnTracePrintk,
		helpers.GetPrandomU32:       ciliumasm.FnGetPrandomU32,
		helpers.GetSmpProcessorID:   ciliumasm.FnGetSmpProcessorId,
		helpers.TailCall:            ciliumasm.FnTailCall,
		helpers.GetCurrentPidTgid:   ciliumasm.FnGetCurrentPidTgid,
		helpers.GetCurrentUidGid:    ciliumasm.FnGetCurrentUidGid,
		helpers.GetCurrentComm:      ciliumasm.FnGetCurrentComm,
		helpers.GetNumaNodeID:       ciliumasm.FnGetNumaNodeId,
		helpers.ProbeReadStr:        ciliumasm.FnProbeReadStr,
		helpers.MapPushElem:         ciliumasm.FnMapPushElem,
		helpers.MapPopElem:          ciliumasm.FnMapPopElem,
		helpers.MapPeekElem:         ciliumasm.FnMapPeekElem,
		helpers.ProbeReadUser:       ciliumasm.FnProbeReadUser,
		helpers.ProbeReadUserStr:    ciliumasm.FnProbeReadUserStr,
		helpers.KtimeGetBootNs:      ciliumasm.FnKtimeGetBootNs,
		helpers.RingbufOutput:       ciliumasm.FnRingbufOutput,
		helpers.RingbufReserve:      ciliumasm.FnRingbufReserve,
		helpers.RingbufSubmit:       ciliumasm.FnRingbufSubmit,
		helpers.RingbufDiscard:      ciliumasm.FnRingbufDiscard,
		helpers.RingbufQuery:        ciliumasm.FnRingbufQuery,
		helpers.KtimeGetCoarseNs:    ciliumasm.FnKtimeGetCoarseNs,
		helpers.Snprintf:            ciliumasm.FnSnprintf,
		helpers.TraceVprintk:        ciliumasm.FnTraceVprintk,
		helpers.Loop:                ciliumasm.FnLoop,
		helpers.Strncmp:             ciliumasm.FnStrncmp,
		helpers.MapLookupPercpuElem: ciliumasm.FnMapLookupPercpuElem,
		helpers.KtimeGetTaiNs:       ciliumasm.FnKtimeGetTaiNs,
	} {
		if num != int32(fn) {
			t.Errorf("%s: number %d, Linux %d", fn, num, int32(fn))
		}
	}
}

func TestStandardSet(t *testing.T) {
	set := helpers.Standard(nil)
	if len(set) != 32 {
		t.Errorf("%d helpers, want 32", len(set))
	}
	gpl := map[int32]bool{
		helpers.TracePrintk: true, helpers.TraceVprintk: true, helpers.Snprintf: true,
		helpers.ProbeRead: true, helpers.ProbeReadStr: true,
		helpers.ProbeReadUser: true, helpers.ProbeReadUserStr: true,
	}
	for num, h := range set {
		if h.Name == "" || h.Func == nil || h.Proto == nil {
			t.Errorf("helper %d: incomplete: %+v", num, h)
			continue
		}
		if h.Proto.GPLOnly != gpl[num] {
			t.Errorf("%s: GPLOnly %v, Linux %v", h.Name, h.Proto.GPLOnly, gpl[num])
		}
		wantSizeArg := -1
		if num == helpers.RingbufReserve {
			wantSizeArg = 1
		}
		if h.Proto.RetSizeArg != wantSizeArg {
			t.Errorf("%s: RetSizeArg %d, want %d", h.Name, h.Proto.RetSizeArg, wantSizeArg)
		}
		// Arguments end at the first ArgNone.
		end := false
		for i, a := range h.Proto.Args {
			if a == vm.ArgNone {
				end = true
			} else if end {
				t.Errorf("%s: argument %d after ArgNone", h.Name, i+1)
			}
		}
	}
	// A second set is independent.
	delete(set, helpers.MapLookupElem)
	if _, ok := helpers.Standard(nil)[helpers.MapLookupElem]; !ok {
		t.Error("Standard sets share state")
	}
	for _, num := range []int32{25, 118, 173} {
		if _, ok := set[num]; ok {
			t.Errorf("helper %d is in the set; the package documents it as left out", num)
		}
	}
}

func TestRegister(t *testing.T) {
	fn := func(_ *vm.Env, r1, _, _, _, _ uint64) uint64 { return 2 * r1 }
	proto := &vm.Prototype{Args: [5]vm.ArgKind{vm.ArgScalar}, Ret: vm.RetInteger, RetSizeArg: -1}
	set := helpers.Standard(nil)
	for _, tc := range []struct {
		name string
		set  vm.Helpers
		num  int32
		fn   vm.HelperFunc
		want error
	}{
		{"nil set", nil, helpers.FirstApplicationHelper, fn, helpers.ErrInvalidHelper},
		{"negative", set, -1, fn, helpers.ErrInvalidHelper},
		{"nil func", set, helpers.FirstApplicationHelper, nil, helpers.ErrInvalidHelper},
		{"standard number", set, helpers.MapLookupElem, fn, helpers.ErrHelperExists},
		{"ok", set, helpers.FirstApplicationHelper, fn, nil},
		{"twice", set, helpers.FirstApplicationHelper, fn, helpers.ErrHelperExists},
		{"low number", set, 9, fn, nil}, // allowed, not conventional
	} {
		err := helpers.Register(tc.set, tc.num, "double", tc.fn, proto)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := set[helpers.FirstApplicationHelper]; got.Name != "double" || got.Proto != proto {
		t.Errorf("registered %+v", got)
	}
	p := load(t, "mov %r1, 21\ncall 0x10000\nexit", set)
	if r0 := run(t, p, nil); r0 != 42 {
		t.Errorf("r0 = %d, want 42", r0)
	}
}

// stopSet is the standard set plus helper 0x10000, which stops the run
// with r0 = r1.
func stopSet() vm.Helpers {
	set := helpers.Standard(nil)
	helpers.Register(set, helpers.FirstApplicationHelper, "stop", func(env *vm.Env, r1, _, _, _, _ uint64) uint64 {
		env.Stop(r1)
		return 0
	}, nil)
	return set
}
