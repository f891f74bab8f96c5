//go:build linux && (amd64 || arm64)

package jit_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// sumPair returns the sum of the two u32 of its 8-byte context.
const sumPair = "ldxw %r0, [%r1]\nldxw %r2, [%r1+4]\nadd %r0, %r2\nexit"

func loadAsm(t *testing.T, src string) *vm.Program {
	t.Helper()
	p, err := vm.Load(&vm.ProgramSpec{Name: "p", Instructions: asm.MustAssemble(src)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerified: a proof compiles unchecked code, as Unchecked does, and
// its runs refuse contexts shorter than the one it proved; a proof of
// another program, or a made-up one, is refused.
func TestVerified(t *testing.T) {
	p := loadAsm(t, sumPair)
	proof, err := verifier.Verify(p, &verifier.Options{ContextSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	jp, err := jit.Compile(p, &jit.Options{Verified: proof})
	if err != nil {
		t.Fatal(err)
	}
	defer jp.Close()
	// Memory that is no region of the run: checked code refuses to read
	// it, unchecked code reads it.
	mem := []byte{5, 0, 0, 0, 6, 0, 0, 0}
	env := func() *vm.Env {
		e := vm.NewEnv()
		e.SetArg(0, uint64(uintptr(unsafe.Pointer(&mem[0]))))
		e.SetArg(1, 8)
		return e
	}
	checked, _ := jit.Compile(p, nil)
	if _, err := checked.Exec(env()); !errors.Is(err, vm.ErrMemoryAccess) {
		t.Errorf("checked: %v, want ErrMemoryAccess", err)
	}
	if r0, err := jp.Exec(env()); r0 != 11 || err != nil {
		t.Errorf("verified: %d, %v; want 11 (no check)", r0, err)
	}
	runtime.KeepAlive(mem)
	if r0, err := jp.Run([]byte{1, 0, 0, 0, 2, 0, 0, 0}); r0 != 3 || err != nil {
		t.Errorf("Run = %d, %v", r0, err)
	}
	if _, err := jp.Run(make([]byte, 7)); !errors.Is(err, jit.ErrShortContext) {
		t.Errorf("Run with 7 bytes: %v, want ErrShortContext", err)
	}
	if _, err := jp.RunPointer(nil, 0); !errors.Is(err, jit.ErrShortContext) {
		t.Errorf("RunPointer with 0 bytes: %v, want ErrShortContext", err)
	}
	e := vm.NewEnv()
	e.SetContext(make([]byte, 4))
	if _, err := jp.Exec(e); !errors.Is(err, jit.ErrShortContext) {
		t.Errorf("Exec with 4 bytes: %v, want ErrShortContext", err)
	}

	other := loadAsm(t, sumPair)
	for _, bad := range []*verifier.Result{{ContextSize: 8}, proof} {
		if _, err := jit.Compile(other, &jit.Options{Verified: bad}); !errors.Is(err, jit.ErrNotVerified) {
			t.Errorf("Compile with %+v: %v, want ErrNotVerified", bad, err)
		}
	}
	if p, err := jit.Compile(nil, nil); p != nil || err == nil {
		t.Errorf("Compile(nil) = %v, %v; want an error", p, err)
	}
}

// Verify, then compile with the proof: the safe way to code without
// run-time memory checks.
func ExampleOptions_verified() {
	p, err := vm.Load(&vm.ProgramSpec{Name: "sum", Instructions: asm.MustAssemble(sumPair)}, nil)
	if err != nil {
		panic(err)
	}
	proof, err := verifier.Verify(p, &verifier.Options{ContextSize: 8})
	if err != nil {
		panic(err) // a *verifier.Error says which rule, where, and why
	}
	jp, err := jit.Compile(p, &jit.Options{Verified: proof})
	if err != nil {
		panic(err)
	}
	defer jp.Close()
	fmt.Println(jp.Run([]byte{1, 0, 0, 0, 2, 0, 0, 0}))
	_, err = jp.Run([]byte{1, 0, 0, 0})
	fmt.Println(err)
	// Output:
	// 3 <nil>
	// program sum: 4-byte context: context smaller than the verified context size (8 bytes)
}
