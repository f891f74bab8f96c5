package frontend

import (
	"testing"

	"github.com/uebpf/uebpf/asm"
)

func movX(dst, src uint8) *asm.Instruction {
	return &asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: dst, Src: src}
}

func aluK(op uint8, dst uint8, imm int32) *asm.Instruction {
	return &asm.Instruction{Opcode: asm.ClassALU64 | op | asm.SourceK, Dst: dst, Imm: imm}
}

// Frame pointers: copies of r10 plus a constant, through mov, add and sub,
// forgotten when written otherwise or moved out of reach.
func TestTrackingFramePointers(t *testing.T) {
	var tr Tracking
	tr.Reset()
	if o, ok := tr.FrameOff(asm.R10, -8); !ok || o != -8 || !tr.FramePointer(asm.R10) {
		t.Fatalf("r10 after Reset: %d %v", o, ok)
	}
	if tr.FramePointer(asm.R2) || tr.InFrame(asm.R2, 0, 1) {
		t.Fatal("r2 known after Reset")
	}
	for _, ins := range []*asm.Instruction{movX(asm.R2, asm.R10), aluK(asm.AluADD, asm.R2, -16), aluK(asm.AluSUB, asm.R2, 8)} {
		if !tr.NeedsALU(ins) {
			t.Fatalf("%+v: NeedsALU false", *ins)
		}
		tr.ALU(ins)
	}
	if o, ok := tr.FrameOff(asm.R2, 4); !ok || o != -20 {
		t.Fatalf("r2+4 = r10%+d %v, want -20", o, ok)
	}
	if !tr.InFrame(asm.R2, 0, 8) || !tr.InFrame(asm.R2, 16, 8) || tr.InFrame(asm.R2, 17, 8) || tr.InFrame(asm.R2, -512+23, 8) {
		t.Error("InFrame bounds")
	}
	tr.ALU(movX(asm.R3, asm.R2))
	if o, ok := tr.FrameOff(asm.R3, 0); !ok || o != -24 {
		t.Fatalf("r3 = r10%+d %v, want -24", o, ok)
	}
	tr.ALU(aluK(asm.AluADD, asm.R3, 1<<20)) // out of reach
	tr.ALU(aluK(asm.AluMUL, asm.R2, 2))
	if tr.FramePointer(asm.R3) || tr.FramePointer(asm.R2) {
		t.Error("r2, r3 still frame pointers")
	}
	if tr.NeedsALU(aluK(asm.AluADD, asm.R5, 1)) {
		t.Error("NeedsALU for a register nothing is known of")
	}
}

// Stack slots that hold a register: remembered by stores through a frame
// pointer, forgotten by overlapping stores, stores through other
// addresses, writes of their register, and the oldest when there are too
// many.
func TestTrackingSlots(t *testing.T) {
	var tr Tracking
	tr.Reset()
	tr.Store(asm.R10, -8, 8, asm.R6)
	if r, ok := tr.SlotReg(-8, 8); !ok || r != asm.R6 {
		t.Fatalf("slot -8: r%d %v", r, ok)
	}
	if _, ok := tr.SlotReg(-8, 4); ok {
		t.Error("a 4-byte read of an 8-byte slot is not a move")
	}
	if r, ok := tr.KeySlot(-8); !ok || r != asm.R6 {
		t.Error("KeySlot")
	}
	if src, move := tr.Load(asm.R7, asm.R10, -8, 8, false); !move || src != asm.R6 {
		t.Errorf("load: r%d %v, want a move from r6", src, move)
	}
	if _, move := tr.Load(asm.R7, asm.R10, -8, 8, true); move {
		t.Error("a sign-extending load is not a move")
	}
	tr.Store(asm.R10, -12, 4, -1) // next to the slot
	if _, ok := tr.SlotReg(-8, 8); !ok {
		t.Error("a store next to the slot forgot it")
	}
	tr.Store(asm.R10, -2, 1, -1) // inside it
	if _, ok := tr.SlotReg(-8, 8); ok {
		t.Error("an overlapping store kept the slot")
	}
	tr.Store(asm.R10, -8, 8, asm.R6)
	tr.Written(asm.R6)
	if _, ok := tr.SlotReg(-8, 8); ok {
		t.Error("writing r6 kept its slot")
	}
	tr.Store(asm.R10, -8, 8, asm.R6)
	tr.Store(asm.R3, 0, 8, -1) // r3 is not a frame pointer
	if _, ok := tr.SlotReg(-8, 8); ok {
		t.Error("a store through an unknown address kept the slot")
	}
	for i := range maxSlots + 1 {
		tr.Store(asm.R10, int32(-8*(i+1)), 8, asm.R6+i%3)
	}
	if _, ok := tr.SlotReg(-8, 8); ok {
		t.Error("the oldest slot is kept beyond maxSlots")
	}
	for i := 1; i <= maxSlots; i++ {
		if r, ok := tr.SlotReg(int32(-8*(i+1)), 8); !ok || r != uint8(asm.R6+i%3) {
			t.Errorf("slot %d: r%d %v", -8*(i+1), r, ok)
		}
	}
	tr.Reset()
	if _, ok := tr.SlotReg(-16, 8); ok {
		t.Error("Reset kept a slot")
	}
}

// The constant in r1 after lddw, forgotten when r1 is written.
func TestTrackingR1(t *testing.T) {
	var tr Tracking
	tr.Reset()
	tr.LDDW(asm.R2, 7)
	if tr.R1Known {
		t.Fatal("lddw r2 made r1 known")
	}
	tr.LDDW(asm.R1, 0x1234)
	if !tr.R1Known || tr.R1 != 0x1234 {
		t.Fatalf("lddw r1: %v %#x", tr.R1Known, tr.R1)
	}
	tr.ALU(aluK(asm.AluMOV, asm.R2, 0))
	if !tr.R1Known {
		t.Error("writing r2 forgot r1")
	}
	tr.ALU(aluK(asm.AluADD, asm.R1, 8))
	if tr.R1Known {
		t.Error("writing r1 kept its constant")
	}
	tr.LDDW(asm.R1, 1)
	tr.Reset()
	if tr.R1Known {
		t.Error("Reset kept r1's constant")
	}
}
