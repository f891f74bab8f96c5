package jit_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Loops whose checks the checked compiler hoists out (compile_hoist.go),
// and loops it must leave alone, each compared with the interpreter on a
// 64-byte context: the guard must send a run to the unchecked copy only
// when every access of the loop is allowed, and the checked copy must
// fault where the interpreter does, after the same stores.
func TestHoistedLoops(t *testing.T) {
	// The rotated string comparisons are compare loops, which run wide
	// without hoisted checks (TestCompareIdioms): here, their hoisting.
	defer jit.SetCompareLoops(false)()
	for _, tc := range []struct {
		name   string
		src    string
		budget uint64
		// loops, accesses: what the compiler must hoist.
		loops, accesses int
		fails           string // the interpreter's error, if any
		fill            byte   // the context's bytes (0: 1, 2, 3, ... with a 0 at 50)
		// guarded: the guard passes, the run takes the unchecked copy.
		guarded bool
	}{{
		name:    "copy inside the context",
		src:     copySource(32),
		guarded: true, loops: 1, accesses: 2,
	}, {
		name:  "copy one byte past the context",
		src:   copySource(33),
		loops: 1, accesses: 2, fails: "outside the program's regions",
	}, {
		name: "read one byte before the context",
		src: `	mov %r2, 0
			mov %r0, 0
		loop:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3-1]
			add %r0, %r4
			add %r2, 1
			jlt %r2, 8, loop
			exit`,
		loops: 1, accesses: 1, fails: "outside the program's regions",
	}, {
		name: "test at the top, words, stores after the test",
		src: `	mov %r2, 8
			mov %r0, 0
		loop:
			jge %r2, 64, out
			mov %r3, %r2
			add %r3, %r1
			ldxdw %r4, [%r3-8]
			add %r0, %r4
			stxdw [%r3-8], %r0
			add %r2, 8
			ja loop
		out:
			exit`,
		guarded: true, loops: 1, accesses: 2,
	}, {
		name: "signed test, counter starting negative",
		src: `	mov %r2, -4
			mov %r0, 0
		loop:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+4]
			add %r0, %r4
			add %r2, 1
			jslt %r2, 60, loop
			exit`,
		loops: 1, accesses: 1,
	}, {
		name:    "inclusive bound, step 4",
		src:     wordSumSource(60),
		guarded: true, loops: 1, accesses: 1,
	}, {
		name:  "inclusive bound one word too far",
		src:   wordSumSource(64),
		loops: 1, accesses: 1, fails: "outside the program's regions",
	}, {
		name: "early exit before the bound would fault",
		src: `	mov %r2, 0
		loop:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			jeq %r4, 0, out
			add %r2, 1
			jne %r2, 100, loop
		out:
			mov %r0, %r2
			exit`,
		loops: 1, accesses: 1,
	}, {
		name: "!= bound the counter steps over",
		src: `	mov %r2, 1
		loop:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			add %r2, 2
			and %r2, 31
			jne %r2, 16, loop
			mov %r0, %r2
			exit`,
		budget: 500, fails: "budget",
	}, {
		name: "!= bound the counter steps over, wrapping",
		src: `	mov %r2, 1
		loop:
			mov %r3, %r1
			add %r3, %r2
			stb [%r3+0], 1
			add %r2, 2
			jne %r2, 16, loop
			mov %r0, %r2
			exit`,
		budget: 500, loops: 1, accesses: 1, fails: "outside the program's regions",
	}, {
		name: "invariant accesses and a counter",
		src: `	mov %r2, 0
			mov %r0, 0
			mov %r6, %r1
			add %r6, 40
		loop:
			ldxdw %r4, [%r6+0]
			ldxw %r5, [%r1+60]
			add %r0, %r4
			add %r0, %r5
			mov %r3, %r2
			add %r3, %r1
			stxb [%r3+0], %r0
			add %r2, 1
			jlt %r2, 40, loop
			exit`,
		guarded: true, loops: 1, accesses: 3,
	}, {
		name: "invariant access past the end, never reached",
		src: `	mov %r2, 0
			mov %r0, 0
		loop:
			add %r2, 1
			jgt %r2, 100, out
			jlt %r2, 200, loop
			ldxdw %r4, [%r1+64]
			add %r0, %r4
			ja loop
		out:
			exit`,
		loops: 1, accesses: 1, // the guard fails: the loop runs checked
	}, {
		name: "lddw in the loop",
		src: `	mov %r2, 0
			mov %r0, 0
		loop:
			lddw %r5, 0x100000000
			add %r0, %r5
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			add %r0, %r4
			add %r2, 1
			jlt %r2, 64, loop
			exit`,
		guarded: true, loops: 1, accesses: 1,
	}, {
		name: "scaled index stays checked",
		src: `	mov %r2, 0
			mov %r0, 0
		loop:
			mov %r3, %r2
			lsh %r3, 1
			add %r3, %r1
			ldxh %r4, [%r3+0]
			add %r0, %r4
			add %r2, 1
			jlt %r2, 33, loop
			exit`,
		fails: "outside the program's regions",
	}, {
		name: "entered in the middle",
		src: `	mov %r2, 0
			mov %r0, 0
			ja body
		loop:
			add %r2, 1
			jge %r2, 64, out
		body:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			add %r0, %r4
			ja loop
		out:
			exit`,
		loops: 1, accesses: 1,
	}, {
		name:    "leaving to code inside the loop's slots",
		src:     leaveInsideSource(63),
		guarded: true, loops: 1, accesses: 2,
	}, {
		name:  "leaving to code inside the loop's slots, one byte too far",
		src:   leaveInsideSource(64),
		loops: 1, accesses: 2, fails: "outside the program's regions",
	}, {
		name: "rotated string comparison",
		src:  strcmpSource(32),
		fill: 'x', guarded: true, loops: 1, accesses: 2,
	}, {
		name: "rotated string comparison one byte too far",
		src:  strcmpSource(33),
		fill: 'x', loops: 1, accesses: 2, fails: "outside the program's regions",
	}, {
		name:  "rotated string comparison stopping early",
		src:   strcmpSource(40),
		loops: 1, accesses: 2,
	}, {
		name: "loop with a helper call",
		src: `	mov %r6, 0
			mov %r7, %r1
		loop:
			mov %r3, %r7
			add %r3, %r6
			ldxb %r1, [%r3+0]
			call 1
			add %r6, 1
			jlt %r6, 64, loop
			exit`,
	}, {
		name: "stack walk through a copy of r10",
		src: `	mov %r2, 0
			mov %r6, %r10
			add %r6, -64
		loop:
			mov %r3, %r6
			add %r3, %r2
			stb [%r3+0], 7
			add %r2, 1
			jlt %r2, 64, loop
			ldxdw %r0, [%r10-8]
			exit`,
		guarded: true, loops: 1, accesses: 1,
	}, {
		name: "stack buffer through r10 and the counter",
		src: `	mov %r2, 0
		loop:
			mov %r3, %r10
			add %r3, -64
			add %r3, %r2
			mov %r4, %r1
			add %r4, %r2
			ldxb %r4, [%r4+0]
			xor %r4, 5
			stxb [%r3+0], %r4
			add %r2, 1
			jne %r2, 64, loop
			ldxdw %r0, [%r10-64]
			ldxdw %r5, [%r10-8]
			add %r0, %r5
			exit`,
		guarded: true, loops: 1, accesses: 2,
	}, {
		name: "stack buffer one byte too far",
		src: `	mov %r2, 0
		loop:
			mov %r3, %r10
			add %r3, %r2
			stb [%r3-64], 1
			add %r2, 1
			jne %r2, 65, loop
			ldxdw %r0, [%r10-64]
			exit`,
		loops: 1, accesses: 1, fails: "outside the program's regions",
	}, {
		name: "rotated string comparison in a local function",
		src:  inLocalCall(strcmpSource(32)),
		fill: 'x', guarded: true, loops: 1, accesses: 2,
	}, {
		name: "rotated string comparison in a local function, one byte too far",
		src:  inLocalCall(strcmpSource(33)),
		fill: 'x', loops: 1, accesses: 2, fails: "outside the program's regions",
	}, {
		name: "stack buffer in a local function's frame",
		src: inLocalCall(`	mov %r2, 0
		loop:
			mov %r3, %r10
			add %r3, -64
			add %r3, %r2
			stxb [%r3+0], %r2
			add %r2, 1
			jlt %r2, 64, loop
			ldxdw %r0, [%r10-8]
			exit`),
		guarded: true, loops: 1, accesses: 1,
	}, {
		name: "inner loop of two",
		src: `	mov %r6, 0
			mov %r0, 0
		outer:
			mov %r2, 0
		inner:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			add %r0, %r4
			add %r2, 1
			jlt %r2, 64, inner
			add %r6, 1
			jlt %r6, 4, outer
			exit`,
		guarded: true, loops: 1, accesses: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			insns := asm.MustAssemble(tc.src)
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: testHelpers})
			if err != nil {
				t.Fatal(err)
			}
			if loops, accesses := jit.Hoisted(vp); loops != tc.loops || accesses != tc.accesses {
				t.Errorf("hoisted %d loops, %d accesses; want %d, %d", loops, accesses, tc.loops, tc.accesses)
			}
			in := diffInput{mem: guardedMem(64), budget: tc.budget}
			for i := range in.mem {
				in.mem[i] = byte(i + 1)
				if tc.fill != 0 {
					in.mem[i] = tc.fill
				}
			}
			if tc.fill == 0 {
				in.mem[50] = 0 // where "early exit" stops
			}
			env := vm.NewEnv()
			env.SetContext(in.mem)
			env.SetBudget(tc.budget)
			_, err = vp.Exec(env)
			if tc.fails == "" && err != nil || tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)) {
				t.Fatalf("interpreter: %v, want error %q", err, tc.fails)
			}
			modes := checkedModes
			if tc.guarded {
				modes = append(modes, jit.TrapSlowPaths(jit.Options{}))
			}
			if err := diffEngines(vp, in, modes...); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// inLocalCall makes src a function that the program calls (bpf-to-bpf)
// and adds 1 to its result.
func inLocalCall(src string) string {
	return "call local f\nadd %r0, 1\nexit\nf:\n" + src
}

// copySource copies the context's first n bytes 32 bytes up, the layout
// of the benchmark set's memcpy: the test at the bottom jumps out.
func copySource(n int) string {
	return `	mov %r2, 0
		loop:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			add %r3, 32
			stxb [%r3+0], %r4
			add %r2, 1
			jeq %r2, ` + strconv.Itoa(n) + `, out
			ja loop
		out:
			ldxdw %r0, [%r1+32]
			exit`
}

// wordSumSource sums the context's words at 0, 4, ... up to last.
func wordSumSource(last int) string {
	return `	mov %r2, 0
			mov %r0, 0
		loop:
			mov %r3, %r1
			add %r3, %r2
			ldxw %r4, [%r3+0]
			add %r0, %r4
			add %r2, 4
			jle %r2, ` + strconv.Itoa(last) + `, loop
			exit`
}

// leaveInsideSource is a loop whose exit test, at its top, leaves to code
// between it and the jump back: that code runs on the last iteration,
// with the counter at n.
func leaveInsideSource(n int) string {
	return `	mov %r2, 0
			mov %r0, 0
		loop:
			jge %r2, ` + strconv.Itoa(n) + `, tail
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			add %r0, %r4
			add %r2, 1
			ja next
		tail:
			mov %r3, %r1
			add %r3, %r2
			ldxb %r4, [%r3+0]
			add %r0, %r4
			exit
		next:
			ja loop`
}

// strcmpSource is the loop clang compiles strcmp of the benchmark set to,
// comparing the context's two halves over n bytes: entered by a jump into
// its middle, with the counter in two registers and an exit instruction
// inside the loop's slots that code after the loop jumps back to.
func strcmpSource(n int) string {
	return `	mov %r3, 0
		mov %r0, 0
		ja body
	loop:
		jeq %r3, 0, done
		mov %r3, %r2
		add %r3, 1
		jne %r2, ` + strconv.Itoa(n-1) + `, body
	done:
		exit
	body:
		mov %r2, %r3
		mov %r3, %r1
		add %r3, %r2
		ldxb %r4, [%r3+32]
		ldxb %r3, [%r3+0]
		jeq %r3, %r4, loop
		sub %r3, %r4
		mov %r0, %r3
		ja done`
}

// A loop that writes a map value the program looked up: the guard finds
// the value's region in the region list, not in the hot regions, which
// start empty; the second run finds it hot. Within the value, the run
// takes the unchecked copy.
func TestHoistedLoopOnMapValue(t *testing.T) {
	array, err := maps.New(&maps.Spec{Name: "a", Type: maps.Array, KeySize: 4, ValueSize: 48, MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, bound := range []int{48, 49} {
		insns := asm.MustAssemble(`
			stw [%r10-4], 1
			lddw %r1, 0
			mov %r2, %r10
			add %r2, -4
			call 9
			jeq %r0, 0, out
			mov %r2, 0
		loop:
			mov %r3, %r0
			add %r3, %r2
			stxb [%r3+0], %r2
			add %r2, 1
			jlt %r2, ` + strconv.Itoa(bound) + `, loop
			ldxdw %r0, [%r0+40]
		out:
			exit`)
		insns[1].Src, insns[1].Imm = asm.PseudoMapFD, 0
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{array}}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			t.Fatal(err)
		}
		if loops, _ := jit.Hoisted(vp); loops != 1 {
			t.Errorf("bound %d: %d loops hoisted, want 1", bound, loops)
		}
		modes := checkedModes
		if bound == 48 {
			modes = append(modes, jit.TrapSlowPaths(jit.Options{}))
		}
		for range 2 {
			if err := diffEngines(vp, diffInput{mem: make([]byte, 8)}, modes...); err != nil {
				t.Fatalf("bound %d: %v", bound, err)
			}
		}
	}
}

// The fuzz generator's walks (progGen.walk) are loops the compiler
// hoists, so that FuzzJITvsInterpreter compares hoisted code too.
func TestWalksHoist(t *testing.T) {
	programs := seedPrograms(t)
	hoisting := 0
	for _, vp := range programs {
		if loops, _ := jit.Hoisted(vp); loops > 0 {
			hoisting++
		}
	}
	if hoisting < len(programs)/8 {
		t.Errorf("%d of %d generated programs have loops with hoisted checks, want at least 1/8", hoisting, len(programs))
	}
}

// BenchmarkHoistedLoop is a loop storing 512 bytes, through the context
// and through the stack, checked and unchecked: with its checks hoisted,
// checked costs what unchecked does.
func BenchmarkHoistedLoop(b *testing.B) {
	for _, tc := range []struct{ name, base string }{{"context", "mov %r6, %r1"}, {"stack", "mov %r6, %r10\nadd %r6, -512"}} {
		insns := asm.MustAssemble(tc.base + `
			mov %r2, 0
		loop:
			mov %r3, %r6
			add %r3, %r2
			stb [%r3+0], 7
			add %r2, 1
			jlt %r2, 512, loop
			ldxdw %r0, [%r6+8]
			exit`)
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name string
			opts jit.Options
		}{{"checked", jit.Options{}}, {"unchecked", jit.Options{Unchecked: true}}} {
			b.Run(tc.name+"/"+mode.name, func(b *testing.B) {
				p := compile(b, vp, mode.opts)
				env := vm.NewEnv()
				env.SetContext(make([]byte, 512))
				for b.Loop() {
					if _, err := p.Exec(env); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The loops of the benchmark set's byte copy and string comparison (a
// rotated loop, entered by a jump into its middle) run unchecked after
// their guards.
func TestSetLoopsHoist(t *testing.T) {
	// The strcmp loops are compare loops, which run wide instead.
	defer jit.SetCompareLoops(false)()
	want := map[string][2]int{"memcpy_1m": {1, 2}, "strcmp_full": {1, 2}, "strcmp_fail": {1, 2}}
	setPrograms(t, func(name string, vp *vm.Program) {
		w, ok := want[name]
		if !ok {
			return
		}
		delete(want, name)
		if loops, accesses := jit.Hoisted(vp); loops != w[0] || accesses != w[1] {
			t.Errorf("%s: hoisted %d loops, %d accesses; want %d, %d", name, loops, accesses, w[0], w[1])
		}
	})
	if len(want) > 0 {
		t.Errorf("not in the set: %v", want)
	}
}

// A hoisted loop followed by more than a MiB of code, run in budget
// slices of a few units: the copy of the loop, after the body, leaves to
// code farther than a conditional branch reaches on arm64, and its slices
// end inside the loop and on its way out (resuming in the copy, or in the
// body's code after the loop).
func TestHoistedLoopFarAndSliced(t *testing.T) {
	var b strings.Builder
	b.WriteString(copySource(32)[:strings.Index(copySource(32), "out:")])
	b.WriteString("out:\n")
	for range 300_000 {
		b.WriteString("add %r5, 1\n")
	}
	b.WriteString("ldxdw %r0, [%r1+32]\nadd %r0, %r5\nexit")
	insns := asm.MustAssemble(b.String())
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: testHelpers})
	if err != nil {
		t.Fatal(err)
	}
	if loops, accesses := jit.Hoisted(vp); loops != 1 || accesses != 2 {
		t.Fatalf("hoisted %d loops, %d accesses; want 1, 2", loops, accesses)
	}
	mem := make([]byte, 64)
	for i := range mem {
		mem[i] = byte(i + 1)
	}
	for _, slice := range []uint64{0, 1, 3, 7} {
		modes := []jit.Options{{}}
		if slice == 0 || runtime.GOARCH == "arm64" {
			// On arm64 a slice that ends inside the copy resumes there;
			// on amd64 in the checked loop.
			modes = append(modes, jit.TrapSlowPaths(jit.Options{}))
		}
		restore := jit.SetSlice(slice)
		err := diffEngines(vp, diffInput{mem: mem, budget: 1 << 20}, modes...)
		restore()
		if err != nil {
			t.Fatalf("slice %d: %v", slice, err)
		}
	}
}
