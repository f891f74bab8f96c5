package frontend

import (
	"slices"

	"github.com/uebpf/uebpf/asm"
)

// Selects: short branches that only choose a register's value, which
// clang emits for "x = cond ? a : b" (log2_int's "(v > 0xffff) << 4"
// becomes "w7 = 1; if r6 > 0xffff goto +1; w7 = 0"). A back end that
// opts in (Options.Selects) runs them without a branch (a conditional
// move), which a data-dependent condition mispredicts half the time.
//
// Two shapes, with J a conditional jump and M "mov x, B" (32 or 64 bits,
// immediate or register, no sign extension):
//
//	triangle:  J: if cond goto J+2;  M;  (J+2 starts a block)
//	goto:      J: if cond goto T;    M;  goto T
//
// Taken, the interpreter charges the stretch up to J; not taken, it goes
// on through M (triangle: the stretch continues into J+2; goto: it ends
// at the goto, which charges it). So the budget's charge and its test
// depend on the condition, and the back end keeps both exact: it tests
// the charge up to J as an ordinary conditional jump does (failing only
// when taken), adds M's slot when not taken, and for the goto shape tests
// once more for the goto's slot, failing at J or at the goto by the
// condition.
//
// Neither M nor the goto may start a block (nothing else jumps into the
// shape), so the shape is all of what runs between J and the join.

// Select is a recognised select: the conditional jump at Jump, the mov
// at Jump+1 and, when Goto, the goto at Jump+2 to the jump's target.
type Select struct {
	Jump int32
	Goto bool
}

// SelectAt returns the select whose jump is at slot pc.
func (a *Analysis) SelectAt(pc int) (Select, bool) {
	i, ok := slices.BinarySearchFunc(a.Selects, int32(pc), func(s Select, pc int32) int { return int(s.Jump - pc) })
	if !ok {
		return Select{}, false
	}
	return a.Selects[i], true
}

// findSelects fills Selects. A select starts at a conditional jump: it
// looks only at those findBlocks listed, not at every slot.
func (a *Analysis) findSelects() {
	for _, pc := range a.condJumps {
		if int(pc)+2 >= len(a.insns) {
			break
		}
		if s, ok := a.selectShape(int(pc)); ok {
			a.Selects = append(a.Selects, s)
		}
	}
}

// selectShape reports whether the slot pc is the jump of a select.
func (a *Analysis) selectShape(pc int) (Select, bool) {
	insns := a.insns
	j := &insns[pc]
	if c := j.Class(); c != asm.ClassJMP && c != asm.ClassJMP32 || !IsConditional(j) {
		return Select{}, false
	}
	if !IsSelectMov(&insns[pc+1]) || a.Starts[pc+1] {
		return Select{}, false
	}
	target := JumpTarget(pc, j)
	if target == pc+2 {
		return Select{Jump: int32(pc)}, true
	}
	g := &insns[pc+2]
	if g.Opcode != asm.ClassJMP|asm.JmpJA || a.Starts[pc+2] || JumpTarget(pc+2, g) != target {
		return Select{}, false
	}
	return Select{Jump: int32(pc), Goto: true}, true
}

// IsSelectMov reports whether ins is a mov a select may make
// conditional: of an immediate or a register, 32 or 64 bits, without
// sign extension.
func IsSelectMov(ins *asm.Instruction) bool {
	switch ins.Opcode {
	case asm.ClassALU64 | asm.AluMOV | asm.SourceK, asm.ClassALU | asm.AluMOV | asm.SourceK:
		return true
	case asm.ClassALU64 | asm.AluMOV | asm.SourceX, asm.ClassALU | asm.AluMOV | asm.SourceX:
		return ins.Offset == 0
	}
	return false
}
