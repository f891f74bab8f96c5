package verifier

import (
	"sort"

	"github.com/uebpf/uebpf/asm"
)

// checkCFG checks the shape of the program before any path is explored:
// functions (the entry, targets of bpf-to-bpf calls, callbacks) do not
// jump into each other or fall through into the next one, and every
// instruction is reachable. It also marks the pruning points: jump
// targets and the instructions after conditional jumps and calls.
func (v *verifier) checkCFG() error {
	n := len(v.insns)
	v.prunePt = v.arena.bools.take(n + 1)
	starts := map[int]bool{0: true}
	for i := 0; i < n; i++ {
		ins := v.insns[i]
		if ins.IsLDDW() {
			if ins.Src == asm.PseudoFunc {
				starts[i+1+int(ins.Imm)] = true
			}
			i++
			continue
		}
		if ins.Opcode == asm.OpCall && ins.Src == asm.PseudoCall {
			starts[i+1+int(ins.Imm)] = true
		}
	}
	var funcs []int
	for s := range starts {
		if s >= 0 && s < n {
			// Callbacks are entered again and again: their first
			// instruction is where the states of the iterations meet.
			v.prunePt[s] = s != 0
		}
		if s < 0 || s >= n {
			v.pc = -1
			return v.fail(ErrInvalidCall, "function at %d is outside the program", s)
		}
		funcs = append(funcs, s)
	}
	sort.Ints(funcs)
	funcOf := v.arena.ints.take(n) // index into funcs
	v.funcOf = funcOf
	for fi, s := range funcs {
		end := n
		if fi+1 < len(funcs) {
			end = funcs[fi+1]
		}
		for i := s; i < end; i++ {
			funcOf[i] = fi
		}
	}

	reached := v.arena.bools.take(n)
	// Every instruction goes on the stack once at most, but few are
	// there at once: a program too long for the arena's buffer grows
	// a stack of its own.
	stack := append(v.arena.ints.spare(n), funcs...)
	for _, s := range funcs {
		reached[s] = true
	}
	visit := func(from, to int) error {
		if to < 0 || to >= n {
			v.pc = from
			return v.fail(ErrInvalidJump, "jump to %d, outside the program", to)
		}
		if funcOf[to] != funcOf[from] {
			v.pc = from
			if to == funcs[funcOf[to]] && to == from+1 {
				return v.fail(ErrInvalidJump, "execution falls through into the function at %d", to)
			}
			return v.fail(ErrInvalidJump, "jump from function at %d into function at %d", funcs[funcOf[from]], funcs[funcOf[to]])
		}
		if !reached[to] {
			reached[to] = true
			stack = append(stack, to)
		}
		return nil
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ins := v.insns[i]
		var err error
		switch {
		case ins.IsLDDW():
			if i+1 < n {
				reached[i+1] = true
			}
			err = visit(i, i+2)
		case ins.Class() == asm.ClassJMP || ins.Class() == asm.ClassJMP32:
			op := ins.Opcode & 0xf0
			switch {
			case ins.Opcode == asm.OpExit:
			case ins.Opcode == asm.OpCall || ins.Opcode == asm.OpCallX:
				v.prunePt[i+1] = true
				err = visit(i, i+1)
			case op == asm.JmpJA:
				off := int(ins.Offset)
				if ins.Class() == asm.ClassJMP32 {
					off = int(ins.Imm)
				}
				v.prunePt[i+1+off] = true
				err = visit(i, i+1+off)
			default:
				v.prunePt[i+1+int(ins.Offset)] = true
				v.prunePt[i+1] = true
				if err = visit(i, i+1+int(ins.Offset)); err == nil {
					err = visit(i, i+1)
				}
			}
		default:
			err = visit(i, i+1)
		}
		if err != nil {
			return err
		}
	}
	for i, ok := range reached {
		if !ok {
			v.pc = i
			return v.fail(ErrUnreachable, "instruction %d can never run; remove dead code", i)
		}
	}
	return nil
}
