package frontend

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// helpers are the helpers the test programs may call: 1 an ordinary one,
// 2 an ArrayLookup helper.
var helpers = vm.Helpers{
	1: {Name: "nop", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }},
	2: {Name: "lookup", Func: func(*vm.Env, uint64, uint64, uint64, uint64, uint64) uint64 { return 0 }, ArrayLookup: true},
}

func load(t testing.TB, src string) *vm.Program {
	t.Helper()
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// marked returns the slots where b is set.
func marked(b []bool) []int {
	var s []int
	for i, v := range b {
		if v {
			s = append(s, i)
		}
	}
	return s
}

func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		src    string
		starts []int
		edges  [][2]int32
		flags  string // the flags set, in the order of Analysis
	}{
		{"straight", "mov %r0, 0\nadd %r0, 1\nexit", []int{0}, nil, ""},
		{"conditional goes on", "mov %r0, 0\njeq %r1, 0, +1\nmov %r0, 1\nexit", []int{0, 3}, nil, ""},
		{"goto ends", "mov %r0, 0\nja +1\nmov %r0, 1\nexit", []int{0, 2, 3}, nil, ""},
		{"gotol", "mov %r0, 0\nja32 +1\nmov %r0, 1\nexit", []int{0, 2, 3}, nil, ""},
		{"loop", "mov %r0, 0\nadd %r0, 1\njlt %r0, 5, -2\nexit", []int{0, 1}, [][2]int32{{1, 2}}, "Loops"},
		{"backward goto", "mov %r0, 0\nl:\nadd %r0, 1\njgt %r0, 5, +1\nja l\nexit", []int{0, 1, 4}, [][2]int32{{1, 3}}, "Loops"},
		{"helper call", "call 1\nmov %r0, 0\nexit", []int{0, 1}, nil, "Calls"},
		{"array lookup goes on", "call 2\nmov %r0, 0\nexit", []int{0}, nil, "Calls Lookups"},
		{"local call", "call local f\nexit\nf:\nmov %r0, 0\nexit", []int{0, 1, 2}, nil, "Local"},
		{"lddw is one slot", "lddw %r0, 1\nexit", []int{0}, nil, ""},
		{"stack only", "stdw [%r10-8], 1\nldxdw %r0, [%r10-8]\nexit", []int{0}, nil, "Memory"},
		{"memory", "ldxdw %r0, [%r1+0]\nexit", []int{0}, nil, "Memory HotUsed"},
		{"packet", "mov %r6, %r1\nldabsb 0\nexit", []int{0, 2}, nil, "Packet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), Options{Switches: true}); err != nil {
				t.Fatal(err)
			}
			if got := marked(a.Starts); !slices.Equal(got, tc.starts) {
				t.Errorf("starts %v, want %v", got, tc.starts)
			}
			if !slices.Equal(a.BackEdges, tc.edges) {
				t.Errorf("back edges %v, want %v", a.BackEdges, tc.edges)
			}
			var flags []string
			for _, f := range []struct {
				name string
				set  bool
			}{{"Loops", a.Loops}, {"Local", a.Local}, {"Calls", a.Calls}, {"Lookups", a.Lookups}, {"Memory", a.Memory}, {"HotUsed", a.HotUsed}, {"Packet", a.Packet}} {
				if f.set {
					flags = append(flags, f.name)
				}
			}
			if got := strings.Join(flags, " "); got != tc.flags {
				t.Errorf("flags %q, want %q", got, tc.flags)
			}
		})
	}
}

func TestCallbacksRefused(t *testing.T) {
	insns := []asm.Instruction{
		{Opcode: asm.OpLDDW, Dst: asm.R2, Src: asm.PseudoFunc, Imm: 3}, {},
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: asm.R0},
		{Opcode: asm.OpExit},
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: asm.R0},
		{Opcode: asm.OpExit},
	}
	p, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
	if err != nil {
		t.Skip("vm.Load refuses the program:", err)
	}
	var a Analysis
	if err := a.Analyze(p, Options{}); !errors.Is(err, vm.ErrUnsupported) {
		t.Errorf("Analyze: %v, want %v", err, vm.ErrUnsupported)
	}
}

// Two loops, one inside the other, and jumps inside, out of one and out of
// both.
func TestLoops(t *testing.T) {
	src := `mov %r0, 0
mov %r1, 0
outer:
mov %r2, 0
inner:
add %r2, 1
jgt %r2, 100, end
jlt %r2, 3, inner
add %r1, 1
jlt %r1, 3, outer
end:
exit`
	// Slots: 0 mov, 1 mov, 2 outer, 3 inner, 4 jgt end, 5 jlt inner,
	// 6 add, 7 jlt outer, 8 exit.
	var a Analysis
	if err := a.Analyze(load(t, src), Options{}); err != nil {
		t.Fatal(err)
	}
	if !a.Loops {
		t.Fatal("no loops")
	}
	if got, want := marked(a.LoopHead), []int{2, 3}; !slices.Equal(got, want) {
		t.Errorf("loop heads %v, want %v", got, want)
	}
	if want := []int32{0, 0, 7, 7, 7, 7, 7, 0, 0}; !slices.Equal(a.LoopEnd, want) {
		t.Errorf("loop ends %v, want %v", a.LoopEnd, want)
	}
	for _, tc := range []struct {
		pc, target int
		want       bool
	}{{4, 8, true}, {4, 6, false}, {1, 8, false}, {6, 7, false}} {
		if got := a.LeavesLoop(tc.pc, tc.target); got != tc.want {
			t.Errorf("LeavesLoop(%d, %d) = %v, want %v", tc.pc, tc.target, got, tc.want)
		}
	}
}

func TestEndsRun(t *testing.T) {
	src := `mov %r0, 0
jeq %r1, 0, +4
lddw %r2, 1
mov %r0, 1
exit
ldabsb 0
mov %r6, %r1
ja +0
mov %r0, 2
mov %r0, 3
mov %r0, 4
mov %r0, 5
exit`
	var a Analysis
	if err := a.Analyze(load(t, "mov %r6, %r1\n"+src), Options{}); err != nil {
		t.Fatal(err)
	}
	// Slots (after the first move): 1 mov, 2 jeq, 3-4 lddw, 5 mov, 6
	// exit, 7 ldabsb, 8 mov, 9 ja, 10-13 movs, 14 exit.
	for pc, want := range map[int]bool{
		3: true, 5: true, 6: true, // an lddw is one instruction
		1: false, 7: false, 8: false, // a jump, or a packet load, first
		10: false, 11: true, // four instructions too many
	} {
		if got := a.EndsRun(pc); got != want {
			t.Errorf("EndsRun(%d) = %v, want %v", pc, got, want)
		}
	}
}

func TestLiveIn(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want uint16
	}{
		{"clang", "ldxdw %r0, [%r1+0]\nstxdw [%r10-8], %r0\nexit", 1<<asm.R1 | 1<<asm.R10},
		{"written first", "mov %r0, 0\nexit", 0},
		{"read on one path", "mov %r0, 0\njeq %r1, 0, +1\nmov %r0, %r3\nexit", 1<<asm.R1 | 1<<asm.R3},
		{"read around a loop", "mov %r0, 0\nadd %r0, %r4\nmov %r4, 1\njlt %r0, 9, -3\nexit", 1 << asm.R4},
		{"helper calls: all", "call 1\nexit", allRegs},
		{"local call: all, and r10", "call local f\nexit\nf:\nmov %r0, 0\nexit", allRegs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Analysis
			if err := a.Analyze(load(t, tc.src), Options{}); err != nil {
				t.Fatal(err)
			}
			if a.LiveIn != tc.want {
				t.Errorf("LiveIn %#x, want %#x", a.LiveIn, tc.want)
			}
		})
	}
}

// switchSource is a compare tree on r2 as clang lowers a switch over
// cases: split with jgt down to runs of at most two jeq, then the default.
func switchSource(cases []int64) string {
	var s strings.Builder
	s.WriteString("ldxdw %r2, [%r1+0]\nmov %r0, 0\n")
	label := 0
	var tree func(lo, hi int)
	tree = func(lo, hi int) {
		if hi-lo <= 2 {
			for i := lo; i < hi; i++ {
				fmt.Fprintf(&s, "jeq %%r2, %d, case%d\n", cases[i], i)
			}
			s.WriteString("ja default\n")
			return
		}
		mid := (lo + hi) / 2
		label++
		right := label
		fmt.Fprintf(&s, "jgt %%r2, %d, right%d\n", cases[mid-1], right)
		tree(lo, mid)
		fmt.Fprintf(&s, "right%d:\n", right)
		tree(mid, hi)
	}
	tree(0, len(cases))
	for i := range cases {
		fmt.Fprintf(&s, "case%d:\nmov %%r0, %d\nexit\n", i, 100+i)
	}
	s.WriteString("default:\nmov %r0, 1\nexit\n")
	return s.String()
}

func TestSwitches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		src   string
		opts  Options
		found bool
		lo    int64
		n     int // entries
		root  int32
	}{
		{"dense", switchSource([]int64{1, 2, 3, 4, 5, 6, 7, 8}), Options{Switches: true}, true, 1, 9, 2},
		{"off", switchSource([]int64{1, 2, 3, 4, 5, 6, 7, 8}), Options{}, false, 0, 0, 0},
		{"too small", switchSource([]int64{1, 2}), Options{Switches: true}, false, 0, 0, 0},
		{"too sparse", switchSource([]int64{0, 1000, 2000, 3000, 4000, 5000}), Options{Switches: true}, false, 0, 0, 0},
		// The root may be the null test of an inline lookup; its
		// subtrees are trees of their own.
		{"after a call", "call 1\n" + switchSource([]int64{1, 2, 3, 4, 5, 6, 7, 8})[len("ldxdw %r2, [%r1+0]\nmov %r0, 0\n"):], Options{Switches: true}, true, 1, 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, tc.src)
			var a Analysis
			if err := a.Analyze(p, tc.opts); err != nil {
				t.Fatal(err)
			}
			if !tc.found {
				if len(a.Switches) != 0 {
					t.Fatalf("switches %+v, want none", a.Switches)
				}
				return
			}
			if len(a.Switches) == 0 {
				t.Fatal("no switch")
			}
			s := a.Switches[0]
			if s.Root != tc.root || s.Reg != asm.R2 || !s.Wide || s.Lo != tc.lo || len(s.Leaves) != tc.n || len(s.Slots) != tc.n {
				t.Fatalf("switch %+v", s)
			}
			// Each entry goes where the tree goes, through as many
			// comparisons, and starts a block.
			insns := p.Instructions()
			for i, leaf := range s.Leaves {
				v := uint64(s.Lo) + uint64(i)
				pc, slots := int(s.Root), 0
				for insns[pc].Class() == asm.ClassJMP && IsConditional(&insns[pc]) {
					slots++
					if asm.JumpTaken(insns[pc].Opcode, v, uint64(int64(insns[pc].Imm)), true) {
						pc = JumpTarget(pc, &insns[pc])
					} else {
						pc++
					}
				}
				if int(leaf) != pc || int(s.Slots[i]) != slots || !a.Starts[leaf] {
					t.Errorf("value %d: leaf %d after %d slots (start %v), want %d after %d", v, leaf, s.Slots[i], a.Starts[leaf], pc, slots)
				}
			}
		})
	}
}

// A second analysis of a program allocates nothing: a pooled back end
// compiles without allocating.
func TestAnalyzeAllocs(t *testing.T) {
	src := "mov %r2, 0\nl:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r4, [%r3+0]\nadd %r2, 1\njlt %r2, 32, l\n" +
		switchSource([]int64{1, 2, 3, 4, 5, 6, 7, 8})
	p := load(t, src)
	opts := Options{Switches: true, Hoist: true}
	var a Analysis
	if err := a.Analyze(p, opts); err != nil {
		t.Fatal(err)
	}
	if len(a.Switches) == 0 || len(a.Hoists) == 0 {
		t.Fatalf("%d switches, %d hoists", len(a.Switches), len(a.Hoists))
	}
	a.DeadAfter(0, asm.R0)
	if n := testing.AllocsPerRun(10, func() {
		a.Analyze(p, opts)
		a.DeadAfter(0, asm.R0)
	}); n != 0 {
		t.Errorf("%v allocations per analysis", n)
	}
}

func BenchmarkAnalyze(b *testing.B) {
	var s strings.Builder
	for range 200 {
		s.WriteString(switchSource([]int64{1, 2, 3, 4, 5, 6, 7, 8})[len("ldxdw %r2, [%r1+0]\nmov %r0, 0\n"):])
	}
	p := load(b, "ldxdw %r2, [%r1+0]\nmov %r0, 0\n"+strings.ReplaceAll(s.String(), "exit", "ja +0"))
	var a Analysis
	b.ReportAllocs()
	for b.Loop() {
		a.Analyze(p, Options{Switches: true})
		a.DeadAfter(0, asm.R0)
	}
}
