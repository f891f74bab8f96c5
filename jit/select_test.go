package jit_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// selectShapes are the branches that only pick a value (frontend.Select),
// as assembler templates: COND is the jump, MOV the mov, X the register
// it writes. r2 and r3 come from the context, r0 and r5 hold values with
// both halves set, so that a 32-bit mov's zero extension shows.
var selectShapes = []struct {
	name, src string
	budgets   int // the budgets that run out in and around the select
}{
	{"triangle", `
		COND, +1
		MOV
		xor %r0, %r2
		exit`, 12},
	{"goto_forward", `
		COND, +3
		MOV
		ja +1
		mov %r0, 77
		xor %r0, %r2
		exit`, 14},
	// log2_int's back edge: the jump and the goto both go to the head.
	{"goto_loop", `
		mov %r6, 5
		mov %r7, 0
	head:
		add %r7, %r0
		add %r2, 1
		sub %r6, 1
		jeq %r6, 0, out
		COND, head
		MOV
		ja head
	out:
		mov %r0, %r7
		xor %r0, %r2
		exit`, 60},
}

const selectPrologue = `
	ldxdw %r2, [%r1+0]
	ldxdw %r3, [%r1+8]
	lddw %r0, 0x1122334455667788
	lddw %r5, 0x99aabbcc80000001
`

// TestSelects compares the engines on every shape of select, with every
// condition in both widths against a register and an immediate, every
// kind of mov, values on both sides of each condition (signed, unsigned,
// in the low half only) and budgets that run out before, inside and after
// the select, also in slices of a few units.
func TestSelects(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	conds := []string{"jeq", "jne", "jset", "jgt", "jge", "jlt", "jle", "jsgt", "jsge", "jslt", "jsle"}
	movs := []string{"mov X, -7", "mov32 X, -7", "mov X, %r5", "mov32 X, %r5", "mov X, 0"}
	values := [][2]uint64{{5, 5}, {4, 5}, {6, 5}, {^uint64(0), 1}, {1<<32 | 4, 5}, {0x80000000, 5}, {0, 0}, {0x7fffffff, 0}, {0x80000000, 0x7fffffff}, {^uint64(0), ^uint64(0)}}
	modes := []jit.Options{{Unchecked: true}, {}}
	slices := []uint64{0, 3}
	if testing.Short() {
		values, slices = values[:6], slices[:1]
	}
	for _, shape := range selectShapes {
		for _, cond := range conds {
			for _, width := range []string{"", "32"} {
				// -1 and 0x7fffffff: where a > k cannot become a >= k+1.
				for _, operand := range []string{"%r3", "5", "-1", "0x7fffffff"} {
					for _, mov := range movs {
						for _, x := range []string{"%r0", "%r2"} {
							body := strings.NewReplacer(
								"COND", fmt.Sprintf("%s%s %%r2, %s", cond, width, operand),
								"MOV", strings.ReplaceAll(mov, "X", x),
							).Replace(shape.src)
							name := fmt.Sprintf("%s/%s%s_%s/%s/%s", shape.name, cond, width, operand, mov, x)
							t.Run(name, func(t *testing.T) {
								testSelect(t, selectPrologue+body, values, shape.budgets, modes, slices)
							})
						}
					}
				}
			}
		}
	}
}

// TestZeroOneSelects compares the engines on selects of 0 or 1 after a
// mov of the other ("mov x, 1; if cond goto +1; mov x, 0"), which the
// amd64 JIT runs as a setcc with no code for the first mov when the
// condition is an unsigned comparison that does not read x: both ways
// round, in both widths, and where something jumps to the select, which
// then needs the first mov. Budgets run out before, inside and after it.
func TestZeroOneSelects(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	values := [][2]uint64{{5, 5}, {4, 5}, {6, 5}, {^uint64(0), 1}, {1<<32 | 4, 5}, {0x80000000, 5}, {0, 0}, {0x7fffffff, 0}}
	shapes := map[string]string{
		"triangle": `
			BEFORE
			COND, +1
			AFTER
			xor %r0, %r2
			exit`,
		// The jump to the select's jump: the first mov must run first.
		"jump_target": `
			BEFORE
			jeq %r3, 3, +1
			ja +0
			COND, +1
			AFTER
			xor %r0, %r2
			exit`,
	}
	for shapeName, shape := range shapes {
		for _, cond := range []string{"jgt", "jge", "jlt", "jle", "jeq", "jsgt"} {
			for _, width := range []string{"", "32"} {
				for _, operand := range []string{"%r3", "5", "-1"} {
					for _, movs := range [][2]string{{"mov X, 1", "mov X, 0"}, {"mov32 X, 0", "mov32 X, 1"}, {"mov32 X, 1", "mov X, 0"}, {"mov X, 1", "mov X, 2"}} {
						for _, x := range []string{"%r0", "%r2"} {
							body := strings.NewReplacer(
								"COND", fmt.Sprintf("%s%s %%r2, %s", cond, width, operand),
								"BEFORE", strings.ReplaceAll(movs[0], "X", x),
								"AFTER", strings.ReplaceAll(movs[1], "X", x),
							).Replace(shape)
							name := fmt.Sprintf("%s/%s%s_%s/%s/%s/%s", shapeName, cond, width, operand, movs[0], movs[1], x)
							t.Run(name, func(t *testing.T) {
								src := selectPrologue + body
								testSelect(t, src, values, 14, []jit.Options{{Unchecked: true}, {}}, []uint64{0, 3})
								// The setcc where it applies.
								// a > -1 and a <= -1 are no carry (k+1 wraps).
								carry := cond != "jeq" && cond != "jsgt" && !(operand == "-1" && (cond == "jgt" || cond == "jle"))
								zeroOne := carry && x == "%r0" && movs[1] != "mov X, 2" && shapeName == "triangle"
								if jit.Optimised && zeroOne != hasSetcc(t, src) {
									t.Errorf("setcc %v, want %v", !zeroOne, zeroOne)
								}
							})
						}
					}
				}
			}
		}
	}
}

func testSelect(t *testing.T, src string, values [][2]uint64, budgets int, modes []jit.Options, slices []uint64) {
	insns, err := asm.Assemble(src)
	if err != nil {
		t.Fatalf("assemble: %v\n%s", err, src)
	}
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := jit.Selects(vp, jit.Options{Unchecked: true}); jit.HasSelects && n != 1 {
		t.Fatalf("%d selects, want 1\n%s", n, src)
	}
	env, mem := vm.NewEnv(), make([]byte, 16)
	env.SetContext(mem)
	for _, o := range modes {
		p, err := jit.Compile(vp, &o)
		if err != nil {
			t.Fatal(err)
		}
		for _, slice := range slices {
			restore := jit.SetSlice(slice)
			for _, v := range values {
				in := diffInput{mem: binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, v[0]), v[1])}
				for budget := range uint64(budgets) { // 0: the default budget
					in.budget = budget
					want := runOutcome(vp, env, mem, in, nil)
					got := runOutcome(p, env, mem, in, nil)
					if got.r0 != want.r0 || got.err != want.err || got.executed != want.executed {
						restore()
						p.Close()
						t.Fatalf("%+v, slice %d, values %#x, budget %d: jit %v, interpreter %v\n%s", o, slice, v, budget, got, want, src)
					}
				}
			}
			restore()
		}
		p.Close()
	}
}

// TestSelectsNot checks that what only looks like a select keeps its
// branch: a mov that is a jump target, a sign-extending mov, a goto to
// elsewhere, and an ALU operation other than mov.
func TestSelectsNot(t *testing.T) {
	if !jit.HasSelects {
		t.Skip("no selects on " + runtime.GOARCH)
	}
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"jgt %r2, %r3, +1\nmov %r0, 1\nexit", 1},                 // the select itself
		{"jgt %r2, %r3, +1\nadd %r0, 1\nexit", 0},                 // not a mov
		{"jgt %r2, %r3, +1\nmovsx864 %r0, %r2\nexit", 0},          // sign extension
		{"jgt %r2, %r3, +2\nmov %r0, 1\nja +1\nexit\nexit", 0},    // the goto goes elsewhere
		{"jgt %r2, %r3, +2\njeq %r2, 0, +0\nmov %r0, 1\nexit", 0}, // the mov is a jump target
		{"jgt %r2, %r3, +2\nmov %r0, 1\nja +0\nexit", 1},          // a goto to the join
	} {
		src := tc.src
		insns, err := asm.Assemble(selectPrologue + src)
		if err != nil {
			t.Fatalf("assemble: %v\n%s", err, src)
		}
		vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := jit.Selects(vp, jit.Options{Unchecked: true}); n != tc.want {
			t.Errorf("%d selects, want %d\n%s", n, tc.want, src)
		}
		if n := jit.Selects(vp, jit.Options{Unchecked: true, Blind: true}); n != 0 {
			t.Errorf("blinded: %d selects, want 0\n%s", n, src)
		}
		for _, v := range [][2]uint64{{1, 2}, {2, 1}} {
			in := diffInput{mem: binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, v[0]), v[1])}
			if err := diffEngines(vp, in, jit.Options{Unchecked: true}, jit.Options{}); err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
		}
	}
}

// The fuzzer's generator makes selects that the JIT runs without a
// branch.
func TestGenSelects(t *testing.T) {
	if !jit.HasSelects {
		t.Skip("no selects on " + runtime.GOARCH)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	selects := 0
	for range 300 {
		vp := generatedProgram(t, rng)
		selects += jit.Selects(vp, jit.Options{})
	}
	t.Logf("%d selects in 300 programs", selects)
	if selects < 50 {
		t.Errorf("%d selects in 300 programs", selects)
	}
}

// TestSelectsInHoistedLoop runs selects inside a loop whose checks are
// hoisted, where the unchecked copy of the loop has selects of its own:
// a triangle and log2_int's goto on the back edge, on bytes of the
// context, with budgets that run out in every slot of the loop, also in
// slices of a few units.
func TestSelectsInHoistedLoop(t *testing.T) {
	if !jit.Supported {
		t.Skip(jit.ErrUnsupportedArch)
	}
	const src = `
		mov %r2, 0
		mov %r0, 0
	loop:
		mov %r3, %r1
		add %r3, %r2
		ldxb %r4, [%r3+0]
		mov %r5, 1
		jgt %r4, 8, +1
		mov %r5, 0
		add %r0, %r5
		add %r2, 1
		jeq %r2, 16, out
		jsgt %r4, 12, loop
		mov32 %r6, %r4
		ja loop
	out:
		add %r0, %r6
		exit`
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: asm.MustAssemble(src)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if loops, _ := jit.Hoisted(vp); loops != 1 {
		t.Fatalf("%d loops hoisted, want 1", loops)
	}
	// Checked, the loop's copy has them too.
	if n := jit.Selects(vp, jit.Options{Unchecked: true}); jit.HasSelects && n != 2 {
		t.Fatalf("unchecked: %d selects, want 2", n)
	}
	if n := jit.Selects(vp, jit.Options{}); jit.HasSelects && n != 4 {
		t.Fatalf("checked: %d selects, want 4", n)
	}
	mem := guardedMem(64)
	for i := range mem {
		mem[i] = byte(i * 7 % 17)
	}
	env := vm.NewEnv()
	env.SetContext(mem)
	for _, m := range []struct {
		o      jit.Options
		slices []uint64
	}{
		// A slice may resume in the checked loop, which the trap fails.
		{jit.TrapSlowPaths(jit.Options{}), []uint64{0}},
		{jit.Options{}, []uint64{0, 3}},
		{jit.Options{Unchecked: true}, []uint64{0, 3}},
	} {
		p, err := jit.Compile(vp, &m.o)
		if err != nil {
			t.Fatal(err)
		}
		for _, slice := range m.slices {
			restore := jit.SetSlice(slice)
			for budget := range uint64(16 * 12) { // 0: the default budget
				in := diffInput{mem: mem, budget: budget}
				want := runOutcome(vp, env, mem, in, nil)
				got := runOutcome(p, env, mem, in, nil)
				if got.r0 != want.r0 || got.err != want.err || got.executed != want.executed {
					restore()
					p.Close()
					t.Fatalf("%+v, slice %d, budget %d: jit %v, interpreter %v", m.o, slice, budget, got, want)
				}
			}
			restore()
		}
		p.Close()
	}
}
