package redteam

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// TestHostileIdioms runs copy, fill and compare loops that the amd64 JIT
// runs wide (jit/internal/frontend/idiom*.go) in checked code, each case in
// a child process, with the spans a hostile program can make: a counter
// that starts far below its bound, a base that wraps the address space, a
// span that leaves the context or the stack in the middle. The wide code
// computes its length and range from registers the program set: it must
// fault exactly where the byte loop does (same r0, error and pc as the
// interpreter) and never touch memory the program was not given.
func TestHostileIdioms(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	copyLoop := func(setup, base string, start, n int64, off int) string {
		return fmt.Sprintf(`%s
			lddw %%r2, %d
		loop:
			mov %%r3, %s
			add %%r3, %%r2
			ldxb %%r4, [%%r3+0]
			add %%r3, %d
			stxb [%%r3+0], %%r4
			add %%r2, 1
			jeq %%r2, %d, out
			ja loop
		out:
			mov %%r0, %%r2
			exit`, setup, start, base, off, n)
	}
	fill := `	mov %r2, 0
		loop:
			mov %r3, %r10
			add %r3, -512
			add %r3, %r2
			stdw [%r3+0], -1
			add %r2, 8
			jlt %r2, 65536, loop
			mov %r0, %r2
			exit`
	strcmp := func(a, b, n int) string {
		return fmt.Sprintf(`	mov %%r3, 0
			mov %%r0, 0
			ja head
		test:
			jeq32 %%r3, 0, out
			mov %%r3, %%r2
			add %%r3, 1
			jne %%r2, %d, head
		out:
			exit
		head:
			mov %%r2, %%r3
			mov %%r3, %%r1
			add %%r3, %%r2
			ldxb %%r4, [%%r3%+d]
			ldxb %%r3, [%%r3%+d]
			jeq32 %%r3, %%r4, test
			sub32 %%r3, %%r4
			mov32 %%r0, %%r3
			ja out`, n-1, b, a)
	}
	// A find loop (strlen, or memchr of r5's byte) from base+start.
	find := func(setup, base, needle string, start, n int64) string {
		return fmt.Sprintf(`%s
			lddw %%r2, %d
		loop:
			mov %%r3, %s
			add %%r3, %%r2
			ldxb %%r3, [%%r3+0]
			%s
			add %%r2, 1
			jeq %%r2, %d, out
			ja loop
		out:
			mov %%r0, %%r2
			exit`, setup, start, base, needle, n)
	}
	// stackFill sets the stack's bytes to 0xff (each engine's stack is its
	// own: what it holds before is not comparable).
	stackFill := `	mov %r2, 0
		fill:
			mov %r3, %r10
			add %r3, -512
			add %r3, %r2
			stdw [%r3+0], -1
			add %r2, 8
			jlt %r2, 512, fill`
	memcmp32 := `	mov %r2, 0
		loop:
			mov %r3, %r1
			add %r3, %r2
			ldxw %r4, [%r3+0]
			ldxw %r5, [%r3+2048]
			jne %r4, %r5, out
			jeq %r4, 0, out
			add %r2, 4
			jlt %r2, 1048576, loop
		out:
			mov %r0, %r2
			exit`
	cases := []struct {
		name  string
		src   string
		ctx   int
		stack bool // the fault is in the stack, at an engine's own address
	}{
		{"copy, counter far below its bound", copyLoop("", "%r1", -1<<40, 64, 4096), 8192, false},
		{"copy, base that wraps", copyLoop("lddw %r5, 0xfffffffffffffff0", "%r5", 0, 64, 32), 64, false},
		{"copy, destination leaves the context", copyLoop("", "%r1", 0, 1<<20, 4096), 8192, false},
		{"copy, source below the context", copyLoop("", "%r1", -4096, 4096, 4096), 8192, false},
		{"fill past the stack's top", fill, 0, true},
		{"strcmp past the context", strcmp(0, 2048, 1<<20), 4096, false},
		{"strcmp from a wrapped base", strcmp(0, -4096, 1<<16), 4096, false},
		{"strlen past the context", find("", "%r1", "jeq32 %r3, 0, out", 0, 1<<20), 4096, false},
		{"strlen, counter far below its bound", find("", "%r1", "jeq32 %r3, 0, out", -1<<40, 64), 4096, false},
		{"strlen from a wrapped base", find("lddw %r5, 0xfffffffffffffff0", "%r5", "jeq32 %r3, 0, out", 0, 1<<16), 4096, false},
		{"memchr past the stack's top", find(stackFill+"\n\t\t\tmov %r5, 0x41\n\t\t\tmov %r6, %r10\n\t\t\tadd %r6, -512", "%r6", "jeq %r3, %r5, out", 0, 1<<20), 0, true},
		{"memcmp of words past the context", memcmp32, 4096, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !inChild() {
				t.Parallel()
			}
			isolated(t, func(*testing.T) (string, error) { return hostileIdiom(c.src, c.ctx, c.stack) })
		})
	}
}

// hostileIdiom runs src on the interpreter and the checked JIT, each on
// the same context of ctxSize equal bytes (strings that never end or
// differ), and compares r0 and the error; a fault in the stack is
// compared without its address, which is each engine's own.
func hostileIdiom(src string, ctxSize int, stack bool) (string, error) {
	insns, err := asm.Assemble(src)
	if err != nil {
		return "", fmt.Errorf("assemble: %w", err)
	}
	vp, err := vm.Load(&vm.ProgramSpec{Name: "idiom", Instructions: insns}, &vm.Options{Timeout: -1})
	if err != nil {
		return "", err
	}
	p, err := jit.Compile(vp, &jit.Options{})
	if err != nil {
		return "", err
	}
	defer p.Close()
	// The context sits inside a larger buffer, so the bytes either side of
	// it are never another region an engine allows (such as its stack,
	// wherever the allocator put it): the first byte a loop reads past the
	// context faults on both engines.
	const guard = 4096
	ctx := make([]byte, guard+ctxSize+guard)[guard : guard+ctxSize : guard+ctxSize]
	run := func(f func([]byte) (uint64, error)) (uint64, string) {
		for i := range ctx {
			ctx[i] = 'x'
		}
		r0, err := f(ctx)
		msg := fmt.Sprint(err)
		if stack {
			msg = hexAddr.ReplaceAllString(msg, "ADDR")
		}
		return r0, msg
	}
	wr0, werr := run(vp.Run)
	gr0, gerr := run(p.Run)
	if gr0 != wr0 || gerr != werr {
		return "", fmt.Errorf("jit: %#x, %s; interpreter: %#x, %s", gr0, gerr, wr0, werr)
	}
	if werr == "<nil>" {
		return "", fmt.Errorf("no fault (r0 %#x)", wr0)
	}
	return "both: " + werr, nil
}

var hexAddr = regexp.MustCompile(`0x[0-9a-f]+`)
