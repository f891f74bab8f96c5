package uebpf_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// TestVerify loads the filter example, which is verified by default with
// the context size its BTF gives: it is accepted, runs on the JIT without
// run-time checks (where the JIT exists), counts as on the interpreter, and
// refuses a context shorter than the verified one.
func TestVerify(t *testing.T) {
	type event struct {
		PID       uint32
		Syscall   uint32
		LatencyNs uint64
	}
	for _, engine := range []uebpf.Engine{uebpf.EngineInterpreter, uebpf.EngineAuto} {
		coll, err := uebpf.LoadFile("examples/filter/filter.bpf.o", &uebpf.Options{
			Engine:    engine,
			Variables: map[string]any{"min_latency_ns": uint64(10)},
		})
		if err != nil {
			t.Fatalf("%v: %v", engine, err)
		}
		prog := coll.Program("count_slow")
		if !prog.Verified() || prog.ContextSize() != int(unsafe.Sizeof(event{})) {
			t.Fatalf("%v: verified %v, context size %d", engine, prog.Verified(), prog.ContextSize())
		}
		for range 3 {
			ev := event{PID: 7, LatencyNs: 100}
			if r0, err := prog.RunPointer(unsafe.Pointer(&ev), unsafe.Sizeof(ev)); err != nil || r0 != 1 {
				t.Fatalf("%v: r0 = %d, %v", engine, r0, err)
			}
		}
		var n uint64
		if err := coll.Map("slow_calls").Lookup(uint32(7), &n); err != nil || n != 3 {
			t.Fatalf("%v: count = %d, %v", engine, n, err)
		}
		if _, err := prog.Run(make([]byte, 8)); !errors.Is(err, uebpf.ErrShortContext) {
			t.Fatalf("%v: short context: %v", engine, err)
		}
		if _, err := prog.RunPointer(nil, unsafe.Sizeof(event{})); !errors.Is(err, uebpf.ErrNilContext) {
			t.Fatalf("%v: nil context: %v", engine, err)
		}
		coll.Close()
	}
	// A context too small for what the program reads is refused at load.
	_, err := uebpf.LoadFile("examples/filter/filter.bpf.o", &uebpf.Options{ContextSize: 4})
	var verr *verifier.Error
	if !errors.As(err, &verr) {
		t.Fatalf("load with a 4-byte context: %v, want a *verifier.Error", err)
	}
	t.Log(err)
}

// TestSkipVerification loads a program the verifier would refuse (its
// context is too small for what it reads) in checked mode: the load
// succeeds, and a run with a context too short for a read fails with a
// *vm.RunError instead of reading past it.
func TestSkipVerification(t *testing.T) {
	for _, engine := range []uebpf.Engine{uebpf.EngineInterpreter, uebpf.EngineAuto} {
		coll, err := uebpf.LoadFile("examples/filter/filter.bpf.o", &uebpf.Options{
			Engine: engine, SkipVerification: true, ContextSize: 4,
		})
		if err != nil {
			t.Fatalf("%v: %v", engine, err)
		}
		prog := coll.Program("count_slow")
		if prog.Verified() {
			t.Fatalf("%v: program reports verified", engine)
		}
		var rerr *vm.RunError
		if _, err := prog.Run(make([]byte, 8)); !errors.As(err, &rerr) {
			t.Fatalf("%v: run with an 8-byte context: %v, want a *vm.RunError", engine, err)
		}
		// An unverified program has no context size to check against:
		// RunPointer runs it too.
		var buf [8]byte
		if _, err := prog.RunPointer(unsafe.Pointer(&buf), 8); !errors.As(err, &rerr) {
			t.Fatalf("%v: RunPointer with an 8-byte context: %v, want a *vm.RunError", engine, err)
		}
		ev := make([]byte, 16)
		ev[10] = 0x20 // latency_ns = 0x200000, above min_latency_ns
		if r0, err := prog.RunPointer(unsafe.Pointer(&ev[0]), 16); err != nil || r0 != 1 {
			t.Fatalf("%v: RunPointer with a whole event: r0 = %d, %v", engine, r0, err)
		}
		coll.Close()
	}
}
