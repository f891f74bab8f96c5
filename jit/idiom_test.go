package jit_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// copyLoop is a copy loop over the context for the idiom tests.
type copyLoop struct {
	size     int    // element size: 1, 2, 4, 8
	n        int    // elements
	src, dst int    // offsets into the context
	shape    string // "clang" (jeq out; ja), "jne" (jne back), "jlt" (jlt back), "pointers"
	start    int    // the counter's first value, in elements
}

// source assembles the loop, followed by a fold of every register it
// writes into r0.
func (l copyLoop) source() string {
	sz := map[int]string{1: "b", 2: "h", 4: "w", 8: "dw"}[l.size]
	bound := l.n * l.size
	start := l.start * l.size
	switch l.shape {
	case "fill", "fill-reg":
		store := fmt.Sprintf("st%s [%%r3%+d], -3", sz, l.dst)
		if l.shape == "fill-reg" {
			store = fmt.Sprintf("stx%s [%%r3%+d], %%r6", sz, l.dst)
		}
		return fmt.Sprintf(`	mov %%r2, %d
			lddw %%r6, 0x1122334455667788
		loop:
			mov %%r3, %%r1
			add %%r3, %%r2
			%s
			add %%r2, %d
			jeq %%r2, %d, out
			ja loop
		out:
			mov %%r0, %%r2
			mul %%r0, 31
			xor %%r0, %%r3
			exit`, start, store, l.size, bound)
	case "pointers":
		return fmt.Sprintf(`	mov %%r4, %d
			mov %%r6, %%r1
			add %%r6, %d
			mov %%r7, %%r1
			add %%r7, %d
		loop:
			ldx%[4]s %%r5, [%%r6+0]
			stx%[4]s [%%r7+0], %%r5
			add %%r6, %[5]d
			add %%r7, %[5]d
			add %%r4, %[5]d
			jne %%r4, %[6]d, loop
			mov %%r0, %%r4
			mul %%r0, 31
			xor %%r0, %%r5
			mul %%r0, 31
			add %%r0, %%r6
			mul %%r0, 31
			add %%r0, %%r7
			exit`, start, l.src, l.dst, sz, l.size, bound)
	}
	exit := map[string]string{
		"clang": fmt.Sprintf("jeq %%r2, %d, out\n ja loop", bound),
		"jne":   fmt.Sprintf("jne %%r2, %d, loop", bound),
		"jlt":   fmt.Sprintf("jlt %%r2, %d, loop", bound),
	}[l.shape]
	return fmt.Sprintf(`	mov %%r2, %d
		loop:
			mov %%r3, %%r1
			add %%r3, %%r2
			ldx%[2]s %%r4, [%%r3+%[3]d]
			add %%r3, %[4]d
			stx%[2]s [%%r3+0], %%r4
			add %%r2, %[5]d
			%[6]s
		out:
			mov %%r0, %%r2
			mul %%r0, 31
			xor %%r0, %%r3
			mul %%r0, 31
			xor %%r0, %%r4
			exit`, start, sz, l.src, l.dst, l.size, exit)
}

// Copy loops (compile_idiom.go) against the interpreter in every mode:
// lengths around the wide code's thresholds, overlaps both ways, spans
// that leave the context in the middle (checked modes), budgets and budget
// slices that run out in the middle.
func TestCopyIdioms(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	type tc struct {
		name   string
		loop   copyLoop
		ctx    int // context size
		budget uint64
		slice  uint64
		faults bool // checked modes only
		idioms int  // wide copies compiled (amd64)
	}
	var cases []tc
	for _, n := range []int{1, 15, 16, 17, 64, 65, 4095} {
		for _, shape := range []string{"clang", "jne", "jlt", "pointers", "fill", "fill-reg"} {
			for _, size := range []int{1, 2, 4, 8} {
				l := copyLoop{size: size, n: n, src: 8, dst: 16 + n*size, shape: shape}
				if strings.HasPrefix(shape, "fill") {
					l.dst = 16
				}
				cases = append(cases, tc{name: fmt.Sprintf("%s/%d×%d", shape, n, size), loop: l, ctx: 32 + 2*n*size, idioms: 1})
			}
		}
	}
	big := copyLoop{size: 1, n: 1 << 20, src: 0, dst: 1 << 20, shape: "clang"}
	cases = append(cases,
		tc{name: "clang/1MiB", loop: big, ctx: 2 << 20, idioms: 1},
		tc{name: "clang/1MiB budget", loop: big, ctx: 2 << 20, budget: 8*500_000 + 5, idioms: 1},
		tc{name: "clang/1MiB slices", loop: big, ctx: 2 << 20, slice: 1000, idioms: 1},
		tc{name: "clang/4095 slices", loop: copyLoop{size: 1, n: 4095, src: 0, dst: 4096, shape: "clang"}, ctx: 8192, slice: 77, idioms: 1},
		tc{name: "jlt/budget exact", loop: copyLoop{size: 1, n: 1000, dst: 1000, shape: "jlt"}, ctx: 2000, budget: 6*999 + 6 + 1, idioms: 1},
		tc{name: "jlt/budget one short", loop: copyLoop{size: 1, n: 1000, dst: 1000, shape: "jlt"}, ctx: 2000, budget: 6 * 1000, idioms: 1},
		tc{name: "start at the bound", loop: copyLoop{size: 1, n: 100, start: 100, dst: 200, shape: "jlt"}, ctx: 400, idioms: 1},
		tc{name: "start past the bound", loop: copyLoop{size: 1, n: 100, start: 150, dst: 200, shape: "jlt"}, ctx: 400, idioms: 1},
		tc{name: "start in the middle", loop: copyLoop{size: 4, n: 100, start: 30, dst: 400, shape: "jne"}, ctx: 800, idioms: 1},
		tc{name: "dst one past src", loop: copyLoop{size: 1, n: 300, src: 0, dst: 1, shape: "clang"}, ctx: 400, idioms: 1},
		tc{name: "dst one before src", loop: copyLoop{size: 1, n: 300, src: 1, dst: 0, shape: "clang"}, ctx: 400, idioms: 1},
		tc{name: "dst is src", loop: copyLoop{size: 8, n: 40, src: 0, dst: 0, shape: "pointers"}, ctx: 400, idioms: 1},
		tc{name: "words, dst 3 bytes past src", loop: copyLoop{size: 4, n: 90, src: 0, dst: 3, shape: "jlt"}, ctx: 400, idioms: 1},
		tc{name: "words, dst 3 bytes before src", loop: copyLoop{size: 4, n: 90, src: 3, dst: 0, shape: "pointers"}, ctx: 400, idioms: 1},
		tc{name: "fault in the middle of dst", loop: copyLoop{size: 1, n: 200, src: 0, dst: 300, shape: "clang"}, ctx: 400, faults: true, idioms: 1},
		tc{name: "fault in the middle of src", loop: copyLoop{size: 2, n: 300, src: 700, dst: 0, shape: "jne"}, ctx: 1000, faults: true, idioms: 1},
		tc{name: "fault in the middle of overlapping dst", loop: copyLoop{size: 1, n: 300, src: 0, dst: 200, shape: "clang"}, ctx: 400, faults: true, idioms: 1},
		tc{name: "fault in the middle of overlapping src", loop: copyLoop{size: 2, n: 300, src: 300, dst: 0, shape: "jne"}, ctx: 800, faults: true, idioms: 1},
		tc{name: "fault before src", loop: copyLoop{size: 8, n: 40, src: -8, dst: 400, shape: "pointers"}, ctx: 800, faults: true, idioms: 1},
		tc{name: "fill, fault in the middle", loop: copyLoop{size: 4, n: 100, dst: 300, shape: "fill"}, ctx: 400, faults: true, idioms: 1},
		tc{name: "fill, fault before", loop: copyLoop{size: 2, n: 100, dst: -2, shape: "fill-reg"}, ctx: 400, faults: true, idioms: 1},
		tc{name: "fill/1MiB slices", loop: copyLoop{size: 1, n: 1 << 20, shape: "fill-reg"}, ctx: 1 << 20, slice: 1000, idioms: 1},
		tc{name: "fault at the last dst byte", loop: copyLoop{size: 1, n: 100, src: 0, dst: 301, shape: "jlt"}, ctx: 400, faults: true, idioms: 1},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.loop.n >= 1<<20 && testing.Short() {
				t.Skip("short")
			}
			vp := loadWideLoops(t, c.loop.source(), c.idioms)
			if c.slice != 0 {
				defer jit.SetSlice(c.slice)()
			}
			in := diffInput{mem: make([]byte, c.ctx), budget: c.budget}
			for i := range in.mem {
				in.mem[i] = byte(i*7 + i>>8)
			}
			modes := allModes
			if c.faults {
				modes = checkedModes
			}
			if err := diffEngines(vp, in, modes...); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The fuzzer's generator makes copy loops that the amd64 JIT copies wide.
func TestGenCopyLoops(t *testing.T) {
	if !jit.Optimised {
		t.Skip("no wide copies on this architecture")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	wide := 0
	var progs []*vm.Program
	for range 500 {
		vp := generatedProgram(t, rng)
		wide += jit.CopyIdioms(vp, jit.Options{})
		progs = append(progs, vp)
	}
	defer func() {
		// Compare loops count too: those alone, for their own test.
		restore := jit.SetCompareLoops(false)
		copies := 0
		for _, insns := range progs {
			copies += jit.CopyIdioms(insns, jit.Options{})
		}
		restore()
		t.Logf("%d compare loops run wide in 500 programs", wide-copies)
		if wide-copies < 20 {
			t.Errorf("%d compare loops run wide in 500 programs", wide-copies)
		}
	}()
	t.Logf("%d wide copies in 500 programs", wide)
	if wide < 20 {
		t.Errorf("%d wide copies in 500 programs", wide)
	}
}

// BenchmarkCopyIdiom times clang's byte copy loop of n bytes, wide
// (threshold 16) and byte by byte.
func BenchmarkCopyIdiom(b *testing.B) {
	for _, n := range []int{16, 32, 64, 256, 4096} {
		for _, wide := range []bool{true, false} {
			for _, unchecked := range []bool{true, false} {
				b.Run(fmt.Sprintf("n=%d/wide=%v/unchecked=%v", n, wide, unchecked), func(b *testing.B) {
					if wide {
						defer jit.SetIdiomMinBytes(16)()
					} else {
						defer jit.SetIdiomMinBytes(1 << 30)()
					}
					src := copyLoop{size: 1, n: n, dst: n, shape: "clang"}.source()
					p := compile(b, loadVM(b, src, nil), jit.Options{Unchecked: unchecked})
					env := vm.NewEnv()
					env.SetContext(make([]byte, 2*n))
					for b.Loop() {
						if _, err := p.Exec(env); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// loadWideLoops assembles and loads src, and checks that the JIT runs
// want of its loops wide, checked and unchecked, and none blinded. It
// sets no time limit: the interpreter's runs of the long cases take
// seconds under the race detector, and the engines must agree whatever
// the machine's speed.
func loadWideLoops(t *testing.T, src string, want int) *vm.Program {
	t.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatalf("assemble: %v\n%s", err, src)
	}
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: testHelpers, Timeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	if jit.Optimised {
		for _, o := range []jit.Options{{}, {Unchecked: true}} {
			if got := jit.CopyIdioms(vp, o); got != want {
				t.Errorf("%+v: %d wide loops, want %d", o, got, want)
			}
		}
		if got := jit.CopyIdioms(vp, jit.Options{Blind: true}); got != 0 {
			t.Errorf("blinded: %d wide loops", got)
		}
	}
	return vp
}

// generatedProgram loads a program of the fuzzer's generator from 400
// bytes of rng.
func generatedProgram(t *testing.T, rng *rand.Rand) *vm.Program {
	t.Helper()
	data := make([]byte, 400)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	insns, _ := genProgram(data)
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: fuzzMaps()}, &vm.Options{Helpers: testHelpers})
	if err != nil {
		t.Fatal(err)
	}
	return vp
}
