package uebpf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

var engines = []uebpf.Engine{uebpf.EngineInterpreter, uebpf.EngineJIT, uebpf.EngineAuto}

func TestEngines(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine.String(), func(t *testing.T) {
			coll, err := uebpf.LoadFile("examples/tailcall/tailcall.bpf.o", &uebpf.Options{Engine: engine})
			if errors.Is(err, jit.ErrUnsupportedArch) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer coll.Close()
			if got := coll.Program("dispatch").Engine(); engine == uebpf.EngineJIT && got != uebpf.EngineJIT {
				t.Errorf("engine %v", got)
			}
			for code, h := range []string{"op_add", "op_sub", "op_mul"} {
				if err := coll.SetTailCall("handlers", uint32(code), h); err != nil {
					t.Fatal(err)
				}
			}
			type op struct {
				code, _ uint32
				a, b    int64
			}
			for _, tt := range []struct {
				op   op
				want int64
			}{{op{0, 0, 2, 3}, 5}, {op{1, 0, 2, 3}, -1}, {op{2, 0, -4, 3}, -12}, {op{7, 0, 1, 1}, -1}} {
				r0, err := coll.Program("dispatch").RunPointer(unsafe.Pointer(&tt.op), unsafe.Sizeof(tt.op))
				if err != nil || int64(r0) != tt.want {
					t.Errorf("%+v: %d, %v; want %d", tt.op, int64(r0), err, tt.want)
				}
			}
		})
	}
}

func TestLoadReader(t *testing.T) {
	f, err := os.Open("examples/filter/filter.bpf.o")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	coll, err := uebpf.Load(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	if coll.Program("count_slow") == nil || coll.Map("slow_calls") == nil {
		t.Error("program or map missing")
	}
	if p := coll.Program("count_slow"); p.Section() != "uebpf/tracepoint/syscall_exit" || p.Name() != "count_slow" || p.VM() == nil {
		t.Errorf("program %s %s", p.Name(), p.Section())
	}
}

func TestHelperErrors(t *testing.T) {
	// The application helper is missing.
	_, err := uebpf.LoadFile("testdata/apphelper.bpf.o", nil)
	if !errors.Is(err, vm.ErrHelperMissing) {
		t.Errorf("missing application helper: %v", err)
	}
	// A helper set of one's own is copied, not kept.
	set := vm.Helpers{}
	proto := &vm.Prototype{Args: [5]vm.ArgKind{vm.ArgScalar}, Ret: vm.RetInteger}
	zero := func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }
	if err := helpers.Register(set, helpers.FirstApplicationHelper, "mine", zero, proto); err != nil {
		t.Fatal(err)
	}
	coll, err := uebpf.LoadFile("testdata/apphelper.bpf.o", &uebpf.Options{Helpers: set})
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	delete(set, helpers.FirstApplicationHelper)
	if r0, err := coll.Program("read_config").Run(make([]byte, 4)); r0 != 1 || err != nil {
		t.Errorf("after the caller's set changed: %d, %v; want 1 (0 + 1)", r0, err)
	}
}

func TestUnknownEngine(t *testing.T) {
	if _, err := uebpf.LoadFile("examples/filter/filter.bpf.o", &uebpf.Options{Engine: 9}); err == nil {
		t.Error("engine 9 accepted")
	}
}

// The standard set marks bpf_trace_printk GPL-only, as Linux does.
func TestGPLOnlyStandardHelper(t *testing.T) {
	spec, err := uebpf.LoadSpec("elf/testdata/errors.bpf.o")
	if err != nil {
		t.Fatal(err)
	}
	for name := range spec.Programs {
		if name != "gpl_helper" {
			delete(spec.Programs, name)
		}
	}
	if _, err := uebpf.NewCollection(spec, nil); !errors.Is(err, elf.ErrGPLOnly) {
		t.Errorf("proprietary program calling bpf_trace_printk: %v", err)
	}
	spec.Programs["gpl_helper"].License = "GPL"
	var out strings.Builder
	coll, err := uebpf.NewCollection(spec, &uebpf.Options{TraceOutput: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	if _, err := coll.Program("gpl_helper").Run(nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "hi") {
		t.Errorf("trace output %q", out.String())
	}
}

func TestVariablesFacade(t *testing.T) {
	coll, err := uebpf.LoadFile("examples/ringbuf/ringbuf.bpf.o", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	var v *uebpf.Variable = coll.Variables["seq"]
	if err := v.Set(uint64(41)); err != nil {
		t.Fatal(err)
	}
	req := [4]uint32{1, 500}
	if _, err := coll.Program("report_failure").RunPointer(unsafe.Pointer(&req), unsafe.Sizeof(req)); err != nil {
		t.Fatal(err)
	}
	var seq uint64
	if err := v.Get(&seq); err != nil || seq != 42 {
		t.Errorf("seq = %d, %v; want 42", seq, err)
	}
}

// loadAPlusB loads the benchmark set's memory_a_plus_b on engine, or
// skips where the engine does not run.
func loadAPlusB(t *testing.T, engine uebpf.Engine) (*uebpf.Collection, *uebpf.Program) {
	t.Helper()
	coll, err := uebpf.LoadFile("internal/benchset/c/memory_a_plus_b.bpf.o", &uebpf.Options{Engine: engine})
	if errors.Is(err, jit.ErrUnsupportedArch) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return coll, coll.Program("memory_a_plus_b")
}

// TestRunAfterClose: a JIT-compiled program of a closed collection returns
// jit.ErrClosed instead of running code that is gone (its lean programs,
// such as this one, take a path of their own in Run).
func TestRunAfterClose(t *testing.T) {
	for _, engine := range []uebpf.Engine{uebpf.EngineJIT, uebpf.EngineAuto} {
		t.Run(engine.String(), func(t *testing.T) {
			coll, p := loadAPlusB(t, engine)
			ctx := make([]byte, p.ContextSize())
			if _, err := p.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if err := coll.Close(); err != nil {
				t.Fatal(err)
			}
			if r0, err := p.Run(ctx); !errors.Is(err, jit.ErrClosed) {
				t.Fatalf("run after Close: %d, %v; want %v", r0, err, jit.ErrClosed)
			}
		})
	}
}

// A run that fails on the JIT's fastest path (a lean program that never
// touches the stack, run from Program.Run) reports the interpreter's error.
func TestRunErrorOnFastPath(t *testing.T) {
	var want string
	for _, engine := range []uebpf.Engine{uebpf.EngineInterpreter, uebpf.EngineJIT} {
		coll, err := uebpf.LoadFile("internal/benchset/c/strcmp.bpf.o", &uebpf.Options{Engine: engine, Budget: 50})
		if errors.Is(err, jit.ErrUnsupportedArch) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		p := coll.Program("strcmp_full")
		// Two equal strings with no NUL: the loop runs to the end.
		r0, err := p.Run(bytes.Repeat([]byte{'x'}, p.ContextSize()))
		coll.Close()
		if !errors.Is(err, vm.ErrBudgetExceeded) || r0 != 0 {
			t.Fatalf("%v: %d, %v; want %v", engine, r0, err, vm.ErrBudgetExceeded)
		}
		if want == "" {
			want = err.Error()
		} else if err.Error() != want {
			t.Errorf("%v: %v; interpreter: %v", engine, err, want)
		}
	}
}

// Func runs a program as Run does, on every engine: the same results, the
// same refusal of a context shorter than the verified one, ErrClosed
// after Close.
func TestFunc(t *testing.T) {
	for _, engine := range []uebpf.Engine{uebpf.EngineInterpreter, uebpf.EngineJIT} {
		t.Run(engine.String(), func(t *testing.T) {
			coll, p := loadAPlusB(t, engine)
			run := p.Func()
			for _, ab := range [][2]uint32{{1, 2}, {0xffffffff, 0xffffffff}, {0, 0}} {
				ctx := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, ab[0]), ab[1])
				if r0, err := run(ctx); r0 != uint64(ab[0])+uint64(ab[1]) || err != nil {
					t.Errorf("Func on %v: %d, %v", ab, r0, err)
				}
			}
			if _, err := run(make([]byte, p.ContextSize()-1)); !errors.Is(err, uebpf.ErrShortContext) {
				t.Errorf("Func on a short context: %v, want ErrShortContext", err)
			}
			coll.Close()
			if engine == uebpf.EngineJIT {
				if _, err := run(make([]byte, 8)); !errors.Is(err, jit.ErrClosed) {
					t.Errorf("Func after Close: %v, want ErrClosed", err)
				}
			}
		})
	}
}

// Run of an unverified program, whose JIT code checks its accesses,
// gives the interpreter's results and errors with a context of any
// length, through whatever path the JIT takes (code that reads its
// context and stores nothing runs through its direct entry), and
// ErrClosed after Close.
func TestRunChecked(t *testing.T) {
	for _, tc := range []struct{ object, program string }{
		{"memory_a_plus_b", "memory_a_plus_b"}, {"strcmp", "strcmp_fail"}, {"strcmp", "strcmp_full"},
	} {
		t.Run(tc.program, func(t *testing.T) {
			load := func(engine uebpf.Engine) (*uebpf.Collection, *uebpf.Program) {
				coll, err := uebpf.LoadFile("internal/benchset/c/"+tc.object+".bpf.o", &uebpf.Options{
					Engine: engine, SkipVerification: true, Timeout: -1,
				})
				if errors.Is(err, jit.ErrUnsupportedArch) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				return coll, coll.Program(tc.program)
			}
			icoll, interp := load(uebpf.EngineInterpreter)
			defer icoll.Close()
			coll, p := load(uebpf.EngineJIT)
			// The programs read a second string 4 KiB into the context: the
			// context sits in a buffer of ours, so that what they read past
			// it faults on both engines, not only where an engine's own
			// stack does not happen to be (the test was flaky without).
			guard := make([]byte, 16<<10)
			for n := range 80 {
				ctx := guard[4096 : 4096+n : 4096+n]
				for i := range ctx {
					ctx[i] = 'x'
				}
				if n > 40 {
					ctx[n-1] = 0
				}
				want, wantErr := interp.Run(ctx)
				got, err := p.Run(ctx)
				if got != want || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
					t.Fatalf("%d-byte context: %d, %v; interpreter %d, %v", n, got, err, want, wantErr)
				}
			}
			coll.Close()
			if _, err := p.Run(make([]byte, 8)); !errors.Is(err, jit.ErrClosed) {
				t.Errorf("after Close: %v, want ErrClosed", err)
			}
		})
	}
}
