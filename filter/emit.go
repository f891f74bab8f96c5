package filter

import (
	"fmt"

	"github.com/uebpf/uebpf/asm"
)

// label names a position in the code being generated; jumps to it are
// resolved once all the code is known.
type label int

// emitter collects instructions and jumps to labels.
type emitter struct {
	code   []asm.Instruction
	target []label // per slot: the label a jump goes to, or -1
	labels []int   // position of each label, -1 until placed
}

func (e *emitter) emit(ins asm.Instruction) {
	e.code = append(e.code, ins)
	e.target = append(e.target, -1)
}

func (e *emitter) newLabel() label {
	e.labels = append(e.labels, -1)
	return label(len(e.labels) - 1)
}

func (e *emitter) place(l label) { e.labels[l] = len(e.code) }

func (e *emitter) alu(op uint8, dst uint8, imm int32) {
	e.emit(asm.Instruction{Opcode: asm.ClassALU64 | op | asm.SourceK, Dst: dst, Imm: imm})
}

func (e *emitter) aluReg(op uint8, dst, src uint8) {
	e.emit(asm.Instruction{Opcode: asm.ClassALU64 | op | asm.SourceX, Dst: dst, Src: src})
}

func (e *emitter) mov(dst, src uint8) {
	if dst != src {
		e.aluReg(asm.AluMOV, dst, src)
	}
}

// movConst loads a 64-bit constant, with one slot when it fits a
// sign-extended 32-bit immediate.
func (e *emitter) movConst(dst uint8, v uint64) {
	if int64(v) == int64(int32(v)) {
		e.alu(asm.AluMOV, dst, int32(v))
		return
	}
	for _, ins := range asm.LDDW(dst, v) {
		e.emit(ins)
	}
}

// load reads size bytes at src+off, zero-extended.
func (e *emitter) load(dst, src uint8, off int, size int) {
	e.emit(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | sizeCode(size), Dst: dst, Src: src, Offset: int16(off)})
}

func (e *emitter) store(dst uint8, off int, src uint8) {
	e.emit(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | asm.SizeDW, Dst: dst, Src: src, Offset: int16(off)})
}

func sizeCode(size int) uint8 {
	switch size {
	case 1:
		return asm.SizeB
	case 2:
		return asm.SizeH
	case 4:
		return asm.SizeW
	}
	return asm.SizeDW
}

// jump emits a conditional jump comparing dst with imm.
func (e *emitter) jump(op uint8, dst uint8, imm int32, to label) {
	e.emit(asm.Instruction{Opcode: asm.ClassJMP | op | asm.SourceK, Dst: dst, Imm: imm})
	e.target[len(e.target)-1] = to
}

// jumpReg emits a conditional jump comparing dst with src.
func (e *emitter) jumpReg(op uint8, dst, src uint8, to label) {
	e.emit(asm.Instruction{Opcode: asm.ClassJMP | op | asm.SourceX, Dst: dst, Src: src})
	e.target[len(e.target)-1] = to
}

func (e *emitter) ja(to label) {
	e.emit(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA})
	e.target[len(e.target)-1] = to
}

func (e *emitter) exit() { e.emit(asm.Instruction{Opcode: asm.OpExit}) }

// finish drops the instructions no path reaches (the verifier refuses
// them, and constant operands leave some behind) and resolves the jumps.
func (e *emitter) finish() ([]asm.Instruction, error) {
	n := len(e.code)
	at := func(l label) int { return e.labels[l] }
	reach := make([]bool, n+1)
	work := []int{0}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		if i >= n || reach[i] {
			continue
		}
		reach[i] = true
		ins := e.code[i]
		switch {
		case ins.IsLDDW():
			reach[i+1] = true
			work = append(work, i+2)
		case ins.Opcode == asm.OpExit:
		case ins.Opcode == asm.ClassJMP|asm.JmpJA:
			work = append(work, at(e.target[i]))
		case e.target[i] >= 0:
			work = append(work, i+1, at(e.target[i]))
		default:
			work = append(work, i+1)
		}
	}
	// newPos[i] is where slot i (or the first kept slot after it) lands.
	newPos := make([]int, n+1)
	k := 0
	for i := 0; i <= n; i++ {
		newPos[i] = k
		if i < n && reach[i] {
			k++
		}
	}
	out := make([]asm.Instruction, 0, k)
	for i, ins := range e.code {
		if !reach[i] {
			continue
		}
		if t := e.target[i]; t >= 0 {
			off := newPos[at(t)] - (len(out) + 1)
			if off != int(int16(off)) {
				return nil, fmt.Errorf("the filter's code is too long (a jump of %d slots)", off)
			}
			ins.Offset = int16(off)
		}
		out = append(out, ins)
	}
	return out, nil
}
