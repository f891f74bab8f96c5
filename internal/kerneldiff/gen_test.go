package kerneldiff

import (
	"testing"

	"github.com/uebpf/uebpf/asm"
)

// kind identifies an instruction form: the opcode plus the fields that
// select a different operation (offset of div, mod and movsx; imm of
// byte swaps, atomics and helper calls; src of lddw and calls).
type kind struct {
	opcode uint8
	src    uint8
	off    int16
	imm    int32
}

func kindOf(ins asm.Instruction) kind {
	k := kind{opcode: ins.Opcode}
	switch ins.Class() {
	case asm.ClassALU, asm.ClassALU64:
		switch ins.Opcode & 0xf0 {
		case asm.AluDIV, asm.AluMOD, asm.AluMOV:
			k.off = ins.Offset
		case asm.AluEND:
			k.imm = ins.Imm
		}
	case asm.ClassJMP:
		if ins.Opcode == asm.OpCall {
			k.src = ins.Src
			if ins.Src == 0 {
				k.imm = ins.Imm
			}
		}
	case asm.ClassSTX:
		if ins.Opcode&0xe0 == asm.ModeATOMIC {
			k.imm = ins.Imm
		}
	case asm.ClassLD:
		if ins.Opcode == asm.OpLDDW {
			k.src = ins.Src
		}
	}
	return k
}

// wantKinds lists every form the generator promises, with v4 forms marked.
func wantKinds() map[kind]bool {
	want := map[kind]bool{} // value: needs cpu v4
	add := func(ins asm.Instruction, v4 bool) { want[kindOf(ins)] = v4 }
	for _, class := range []uint8{asm.ClassALU, asm.ClassALU64} {
		for _, op := range aluOps {
			switch op {
			case asm.AluNEG:
				add(asm.Instruction{Opcode: class | op}, false)
			case asm.AluEND:
				for _, imm := range []int32{16, 32, 64} {
					if class == asm.ClassALU {
						add(asm.Instruction{Opcode: class | op, Imm: imm}, false)
						add(asm.Instruction{Opcode: class | op | asm.SourceX, Imm: imm}, false)
					} else {
						add(asm.Instruction{Opcode: class | op, Imm: imm}, true) // bswap
					}
				}
			default:
				for _, src := range []uint8{asm.SourceK, asm.SourceX} {
					add(asm.Instruction{Opcode: class | op | src}, false)
					if op == asm.AluDIV || op == asm.AluMOD {
						add(asm.Instruction{Opcode: class | op | src, Offset: 1}, true)
					}
				}
				if op == asm.AluMOV {
					add(asm.Instruction{Opcode: class | op | asm.SourceX, Offset: 8}, true)
					add(asm.Instruction{Opcode: class | op | asm.SourceX, Offset: 16}, true)
					if class == asm.ClassALU64 {
						add(asm.Instruction{Opcode: class | op | asm.SourceX, Offset: 32}, true)
					}
				}
			}
		}
	}
	for _, class := range []uint8{asm.ClassJMP, asm.ClassJMP32} {
		for _, op := range jumpOps {
			add(asm.Instruction{Opcode: class | op | asm.SourceK}, false)
			add(asm.Instruction{Opcode: class | op | asm.SourceX}, false)
		}
	}
	add(asm.Instruction{Opcode: asm.ClassJMP | asm.JmpJA}, false)
	add(asm.Instruction{Opcode: asm.ClassJMP32 | asm.JmpJA}, true) // gotol
	for _, s := range sizes {
		add(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEM | s.code}, false)
		add(asm.Instruction{Opcode: asm.ClassST | asm.ModeMEM | s.code}, false)
		add(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeMEM | s.code}, false)
		if s.bytes < 8 {
			add(asm.Instruction{Opcode: asm.ClassLDX | asm.ModeMEMSX | s.code}, true)
			add(asm.Instruction{Opcode: asm.ClassLD | asm.ModeABS | s.code}, false)
			add(asm.Instruction{Opcode: asm.ClassLD | asm.ModeIND | s.code}, false)
		}
		if s.bytes >= 4 {
			for _, op := range atomicOps {
				add(asm.Instruction{Opcode: asm.ClassSTX | asm.ModeATOMIC | s.code, Imm: op}, false)
			}
		}
	}
	for _, src := range []uint8{0, asm.PseudoMapFD, asm.PseudoMapValue} {
		add(asm.Instruction{Opcode: asm.OpLDDW, Src: src}, false)
	}
	for _, h := range []int32{helperMapLookup, helperMapUpdate, helperMapDelete, helperTailCall} {
		add(asm.Instruction{Opcode: asm.OpCall, Imm: h}, false)
	}
	add(asm.Instruction{Opcode: asm.OpCall, Src: asm.PseudoCall}, false)
	add(asm.Instruction{Opcode: asm.OpExit}, false)
	return want
}

func countKinds(cfg Config, seeds uint64) map[kind]int {
	seen := map[kind]int{}
	for seed := range seeds {
		p := Generate(seed, cfg)
		for _, insns := range append([][]asm.Instruction{p.Insns}, p.Tails...) {
			for i := 0; i < len(insns); i++ {
				seen[kindOf(insns[i])]++
				if insns[i].IsLDDW() {
					i++
				}
			}
		}
	}
	return seen
}

// TestGeneratorCoverage: 1,000 programs (TestKernelAgreement's corpus)
// use every promised form several times, and without cpu v4 none of the
// v4 forms, which older kernels refuse.
func TestGeneratorCoverage(t *testing.T) {
	want := wantKinds()
	for _, cfg := range []Config{{V4: true}, {V4: false}} {
		seen := countKinds(cfg, 1000)
		for k, v4 := range want {
			ins := []asm.Instruction{{Opcode: k.opcode, Src: k.src, Offset: k.off, Imm: k.imm}, {}}
			switch n := seen[k]; {
			case v4 && !cfg.V4 && n > 0:
				t.Errorf("without v4: %q appears %d times", asm.Format(ins, 0), n)
			case (!v4 || cfg.V4) && n < 5:
				t.Errorf("v4=%v: %q appears %d times in 1000 programs, want at least 5", cfg.V4, asm.Format(ins, 0), n)
			}
		}
		for k, n := range seen {
			if _, ok := want[k]; !ok {
				ins := []asm.Instruction{{Opcode: k.opcode, Src: k.src, Offset: k.off, Imm: k.imm}, {}}
				t.Errorf("v4=%v: unlisted form %q appears %d times", cfg.V4, asm.Format(ins, 0), n)
			}
		}
	}
}

// TestGeneratorOperands: every register r0..r9 is an ALU destination (the
// roles of r6..r9 rotate), and stack offsets beyond -128 appear (32-bit
// displacements in the JIT's code).
func TestGeneratorOperands(t *testing.T) {
	var aluDst [11]int
	deepStack := 0
	for seed := range uint64(1000) {
		for _, ins := range Generate(seed, Config{V4: true}).Insns {
			switch ins.Class() {
			case asm.ClassALU, asm.ClassALU64:
				aluDst[ins.Dst]++
			case asm.ClassLDX:
				if ins.Src == regFP && ins.Offset < -128 {
					deepStack++
				}
			case asm.ClassST, asm.ClassSTX:
				if ins.Dst == regFP && ins.Offset < -128 {
					deepStack++
				}
			}
		}
	}
	for r := range 10 {
		if aluDst[r] < 100 {
			t.Errorf("r%d is the destination of %d ALU instructions in 1000 programs, want at least 100", r, aluDst[r])
		}
	}
	if aluDst[regFP] != 0 {
		t.Errorf("r10 is the destination of %d ALU instructions", aluDst[regFP])
	}
	if deepStack < 100 {
		t.Errorf("%d stack accesses below r10-128 in 1000 programs, want at least 100", deepStack)
	}
}
