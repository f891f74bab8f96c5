package verifier_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// genProgram turns fuzz bytes into a program that is mostly structurally
// valid: 4 bytes per instruction choose its kind, registers and operands.
func genProgram(data []byte) []asm.Instruction {
	// A prologue gives every register a value, so that most programs get
	// past the first reads: numbers, the context, stack and map values.
	out := asm.MustAssemble(`
		mov %r0, 0
		mov %r2, 8
		mov %r3, -1
		mov %r4, 16
		mov %r5, 3
		mov %r6, %r1
		mov %r7, %r10
		add %r7, -16
		lddw %r8, map_val_by_fd(5)
		mov %r9, 1
		stdw [%r10-8], 0
		stdw [%r10-16], 0
		stdw [%r10-24], 0
		stdw [%r10-32], 0
	`)
	if len(data) > 0 && data[0]&7 == 7 {
		out = out[:0]
	}
	// With bit 6 of the first byte, the second half of data is the body
	// of a function that lddw (BPF_PSEUDO_FUNC) can load, for bpf_loop.
	var cbData []byte
	if len(data) >= 16 && data[0]&0x40 != 0 {
		half := len(data) / 2 &^ 3
		data, cbData = data[:half], data[half:]
	}
	// With bit 5 of the first byte, the body runs in a loop long enough
	// to need widening: r9 counts up (or down) by a step to a bound, in
	// 64 or 32 bits; the body may change r9 too, or leave the loop.
	var loopHead int
	var loopData byte
	loop := len(data) >= 8 && data[0]&0x20 != 0
	if loop {
		loopData = data[1]
		bound := []int32{60, 100, 200, 250}[loopData&3]
		if loopData&4 != 0 { // count down
			out = append(out, asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: asm.R9, Imm: bound})
		} else {
			out = append(out, asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: asm.R9, Imm: 0})
		}
		loopHead = len(out)
	}
	out, funcRefs := genBody(out, data)
	if loop {
		bound := []int32{60, 100, 200, 250}[loopData&3]
		step := int32(loopData>>3&3) + 1
		class, jclass := uint8(asm.ClassALU64), uint8(asm.ClassJMP)
		if loopData&0x20 != 0 {
			class, jclass = asm.ClassALU, asm.ClassJMP32
		}
		if loopData&4 != 0 {
			out = append(out, asm.Instruction{Opcode: class | asm.AluSUB, Dst: asm.R9, Imm: step})
			out = append(out, asm.Instruction{Opcode: jclass | asm.JmpJGT, Dst: asm.R9, Imm: 0})
		} else {
			out = append(out, asm.Instruction{Opcode: class | asm.AluADD, Dst: asm.R9, Imm: step})
			out = append(out, asm.Instruction{Opcode: jclass | asm.JmpJLT, Dst: asm.R9, Imm: bound})
		}
		out[len(out)-1].Offset = int16(loopHead - len(out))
	}
	out = append(out, asm.Instruction{Opcode: asm.OpExit})
	if cbData == nil {
		for _, pc := range funcRefs {
			out[pc].Src = 0 // no function to point at
		}
		return out
	}
	cb := len(out)
	out, _ = genBody(out, cbData)
	out = append(out, asm.Instruction{Opcode: asm.OpExit})
	for _, pc := range funcRefs {
		out[pc].Imm = int32(cb - pc - 1)
	}
	return out
}

// genBody appends at most 60 instructions made from data to out. It
// returns the lddw of function addresses, to be pointed at a function.
func genBody(out []asm.Instruction, data []byte) ([]asm.Instruction, []int) {
	var funcRefs []int
	body := len(out)
	offs := []int16{0, 1, 2, 3, 4, 7, 8, 12, 15, 16, 60, 63, 64, -1, -4, -8, -16, -24, -32, -64, -504, -512, -513, 100}
	imms := []int32{0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, -1, -8, -16, 255, 256, 0x7fffffff, -0x80000000, 4096, 12, 24, 60}
	for i := 0; i+4 <= len(data) && len(out)-body < 60; i += 4 {
		k, regs, a, b := data[i], data[i+1], data[i+2], data[i+3]
		dst, src := regs%11, (regs>>4)%11
		off := offs[int(a)%len(offs)]
		imm := imms[int(b)%len(imms)]
		switch k % 16 {
		case 0, 1, 2: // ALU
			ops := []uint8{asm.AluADD, asm.AluSUB, asm.AluMUL, asm.AluDIV, asm.AluOR, asm.AluAND, asm.AluLSH,
				asm.AluRSH, asm.AluNEG, asm.AluMOD, asm.AluXOR, asm.AluMOV, asm.AluARSH, asm.AluEND}
			op := ops[int(a)%len(ops)]
			class := uint8(asm.ClassALU64)
			if k&0x10 != 0 {
				class = asm.ClassALU
			}
			srcBit := uint8(0)
			if k&0x20 != 0 && op != asm.AluNEG {
				srcBit = asm.SourceX
			}
			ins := asm.Instruction{Opcode: class | op | srcBit, Dst: dst, Src: src, Imm: imm}
			if srcBit == 0 {
				ins.Src = 0
			}
			switch op {
			case asm.AluDIV, asm.AluMOD:
				ins.Offset = int16(k>>6) & 1
			case asm.AluEND:
				ins.Imm = []int32{16, 32, 64}[int(b)%3]
				if class == asm.ClassALU64 {
					ins.Opcode &^= asm.SourceX
				}
			case asm.AluMOV:
				if srcBit != 0 && k&0x40 != 0 {
					ins.Offset = []int16{8, 16, 32}[int(b)%3]
					if class == asm.ClassALU && ins.Offset == 32 {
						ins.Offset = 16
					}
				}
			}
			if ins.Opcode&asm.SourceX != 0 || op == asm.AluNEG || op == asm.AluEND {
				if op != asm.AluEND && op != asm.AluNEG {
					ins.Imm = 0
				} else if op == asm.AluNEG {
					ins.Imm = 0
				}
			}
			out = append(out, ins)
		case 3, 4: // conditional jump
			ops := []uint8{asm.JmpJEQ, asm.JmpJGT, asm.JmpJGE, asm.JmpJSET, asm.JmpJNE, asm.JmpJSGT,
				asm.JmpJSGE, asm.JmpJLT, asm.JmpJLE, asm.JmpJSLT, asm.JmpJSLE}
			op := ops[int(b)%len(ops)]
			class := uint8(asm.ClassJMP)
			if k&0x10 != 0 {
				class = asm.ClassJMP32
			}
			jo := int16(a%8) - 2
			if k&0x40 != 0 {
				jo = int16(a%8) - 6
			}
			ins := asm.Instruction{Opcode: class | op, Dst: dst, Offset: jo, Imm: imms[int(k>>4)%len(imms)]}
			if k&0x20 != 0 {
				ins.Opcode |= asm.SourceX
				ins.Src, ins.Imm = src, 0
			}
			out = append(out, ins)
		case 5: // ja
			if k&0x30 != 0 {
				out = append(out, asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: dst % 10, Src: src})
				continue
			}
			out = append(out, asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA, Offset: int16(a%6) - 3})
		case 6, 7: // load
			sizes := []uint8{asm.SizeB, asm.SizeH, asm.SizeW, asm.SizeDW}
			mode := uint8(asm.ModeMEM)
			if k&0x80 != 0 && b%4 != 3 {
				mode = asm.ModeMEMSX
			}
			out = append(out, asm.Instruction{Opcode: asm.ClassLDX | mode | sizes[b%4], Dst: dst, Src: src, Offset: off})
		case 8, 9: // store
			sizes := []uint8{asm.SizeB, asm.SizeH, asm.SizeW, asm.SizeDW}
			if k&0x10 != 0 {
				out = append(out, asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | sizes[b%4], Dst: dst, Offset: off, Imm: imm})
			} else {
				out = append(out, asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | sizes[b%4], Dst: dst, Src: src, Offset: off})
			}
		case 10: // atomic
			ops := []int32{asm.AtomicADD, asm.AtomicOR, asm.AtomicAND, asm.AtomicXOR,
				asm.AtomicADD | asm.AtomicFetch, asm.AtomicXCHG, asm.AtomicCMPXCHG}
			size := uint8(asm.SizeW)
			if k&0x10 != 0 {
				size = asm.SizeDW
			}
			out = append(out, asm.Instruction{Opcode: asm.ClassSTX | asm.ModeATOMIC | size, Dst: dst, Src: src,
				Offset: off, Imm: ops[int(b)%len(ops)]})
		case 11: // lddw
			if b%4 == 3 && a%4 == 0 {
				funcRefs = append(funcRefs, len(out))
				out = append(out, asm.Instruction{Opcode: asm.OpLDDW, Dst: dst, Src: asm.PseudoFunc}, asm.Instruction{})
				continue
			}
			switch b % 4 {
			case 0:
				l := asm.LDDW(dst, uint64(int64(imm))<<(a%40))
				out = append(out, l[0], l[1])
			case 1:
				out = append(out, asm.Instruction{Opcode: asm.OpLDDW, Dst: dst, Src: asm.PseudoMapFD, Imm: int32(a % 4)}, asm.Instruction{})
			default:
				out = append(out, asm.Instruction{Opcode: asm.OpLDDW, Dst: dst, Src: asm.PseudoMapValue, Imm: 4 + int32(a%2)},
					asm.Instruction{Imm: int32(b % 16)})
			}
		case 12: // helper call
			ids := []int32{1, 2, 3, 7, 12, 130, 131, 132, 133, 5, 0x10000, 181}
			out = append(out, asm.Instruction{Opcode: asm.OpCall, Imm: ids[int(b)%len(ids)]})
		case 13: // local call
			if k&0x30 != 0 {
				out = append(out, asm.Instruction{Opcode: asm.ClassALU64 | asm.AluADD, Dst: dst % 10, Imm: imm})
				continue
			}
			out = append(out, asm.Instruction{Opcode: asm.OpCall, Src: asm.PseudoCall, Imm: int32(a%8) - 2})
		case 14, 15: // exit, rarely: code after it is unreachable
			if k&0xe0 == 0xe0 {
				out = append(out, asm.Instruction{Opcode: asm.OpExit})
			} else {
				out = append(out, asm.Instruction{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: dst % 10, Imm: imm})
			}
		}
	}
	return out, funcRefs
}

// FuzzVerifierSoundness runs every program the verifier accepts in the
// checked interpreter: it must never access memory outside its regions,
// misalign an atomic, write read-only memory or run out of budget.
//
// Programs whose loops the verifier widened may legitimately run far
// longer than the instructions the verifier processed, so their budget
// is widenedBudget (2^27 instructions, about a second in the
// interpreter), and widened loops may run 2^8 times per widening of an
// entry (MaxLoopIterations): the generator's loops run at most 250 times
// around at most 64 instructions, two nested widened loops (widened a
// few times each) 2^26 instructions at most, so running out of it means
// a loop the ranking proof should have refused (or, rarely, three nested
// loops, which a finding's program shows). Programs accepted with loops
// that have no termination proof (LoopsBoundedByBudget, tried on
// odd-length inputs) may run out of their budget, and nothing else.
func FuzzVerifierSoundness(f *testing.F) {
	f.Add([]byte{11, 0x01, 0, 0, 14, 0, 0, 0})
	f.Add([]byte{0, 0x00, 11, 3, 6, 0x10, 4, 3, 3, 0x00, 3, 1, 14, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{8, 0x1a, 15, 3, 6, 0xa2, 15, 3, 11, 0x01, 1, 1, 0, 0x00, 11, 0, 12, 0, 0, 0, 3, 0, 2, 0, 6, 0x00, 3, 3, 14, 0, 0, 0})
	f.Add([]byte{0, 0x06, 11, 0, 0, 0x06, 0, 1, 3, 0x06, 6, 0, 5, 0, 0, 0, 14, 0, 0, 0})
	// bpf_loop(r1, callback, r3, r4) with a callback of its own.
	// mov r1, 2; lddw r2, callback; mov r3, r7; mov r4, 0; call 181 and
	// callback: ldxdw r0, [r2]; and r0, 1; mov r9, 1 (3 times).
	f.Add([]byte{0x40, 0x01, 11, 2, 11, 0x02, 0, 3, 0x15, 0x71, 0, 0, 0, 0x04, 11, 0, 12, 0, 0, 11,
		6, 0x21, 0, 3, 0, 0x00, 5, 1, 0, 0x09, 11, 1, 0, 0x09, 11, 1, 0, 0x09, 11, 1})
	// A loop of 250 iterations around the body, widened.
	f.Add([]byte{0x20, 0x03, 0, 0, 0, 0x33, 0, 0, 6, 0x06, 4, 0, 14, 0, 0, 0})
	maps := testMaps(f)
	const limit = 20000
	const widenedBudget = 1 << 27
	const unprovenBudget = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		insns := genProgram(data)
		p, err := vm.Load(&vm.ProgramSpec{Name: "fuzz", Instructions: insns, Maps: maps}, &vm.Options{Helpers: testHelpers})
		if err != nil {
			return
		}
		// Odd-length inputs also accept loops with no termination proof
		// (LoopsBoundedByBudget): they must be as memory-safe, only the
		// budget may end them.
		budgeted := len(data)%2 == 1
		res, err := verifier.Verify(p, &verifier.Options{ContextSize: testCtxSize, MaxInstructions: limit, MaxLoopIterations: 1 << 8, LoopsBoundedByBudget: budgeted})
		if err != nil {
			var ve *verifier.Error
			if !errors.As(err, &ve) {
				t.Fatalf("error is not a *verifier.Error: %v", err)
			}
			return
		}
		env := vm.NewEnv()
		env.SetContext(make([]byte, testCtxSize))
		budget := uint64(limit*len(insns)) + 1000
		bads := []error{vm.ErrMemoryAccess, vm.ErrMisaligned, vm.ErrBudgetExceeded, vm.ErrReadOnly, vm.ErrCallDepth}
		switch {
		case res.LoopsUnproven > 0:
			budget = unprovenBudget
			bads = slices.DeleteFunc(bads, func(e error) bool { return e == vm.ErrBudgetExceeded })
		case res.LoopsWidened > 0:
			budget = widenedBudget
		}
		env.SetBudget(budget)
		_, err = p.Exec(env)
		for _, bad := range bads {
			if errors.Is(err, bad) {
				text, _ := asm.Disassemble(insns)
				t.Fatalf("verified program (%d insns processed) failed: %v\n%s", res.InstructionsProcessed, err, text)
			}
		}
	})
}
