package jit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"unsafe"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/internal/benchset"
	"github.com/uebpf/uebpf/internal/conformance"
	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/vm"
)

// TestCodeHash writes a hash of the code of every program of the
// conformance suite and the benchmark set, in every mode, to the file
// $UEBPF_CODEHASH, and that of the arm64 back end's code to
// $UEBPF_CODEHASH_ARM64: a refactoring of the compiler must not change
// them. Addresses of maps, which vary between processes, are masked.
func TestCodeHash(t *testing.T) {
	out, outARM64 := os.Getenv("UEBPF_CODEHASH"), os.Getenv("UEBPF_CODEHASH_ARM64")
	if out == "" && outARM64 == "" || !jit.Supported {
		t.Skip("set UEBPF_CODEHASH or UEBPF_CODEHASH_ARM64")
	}
	var progs []namedProgram
	for _, b := range benchset.Set {
		obj, err := benchset.Object(b.Object)
		if err != nil {
			t.Fatal(err)
		}
		coll, err := uebpf.Load(bytes.NewReader(obj), &uebpf.Options{Engine: uebpf.EngineInterpreter, Timeout: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer coll.Close()
		progs = append(progs, namedProgram{"benchset/" + b.Name, coll.Program(b.Program).VM()})
	}
	if dir, ok := conformance.SharedDir(); ok {
		tests, err := conformance.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, ct := range tests {
			ct.Run(func(insns []asm.Instruction, helpers vm.Helpers) (conformance.Program, error) {
				vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns}, &vm.Options{Helpers: helpers})
				if err == nil {
					progs = append(progs, namedProgram{"conformance/" + ct.Name, vp})
				}
				return nil, fmt.Errorf("not run")
			})
		}
	} else {
		t.Fatal("no conformance suite")
	}
	if out != "" {
		modes := []jit.Options{
			{}, {Unchecked: true}, {Blind: true}, {Unchecked: true, Blind: true},
			{AMD64: jit.AMD64Options{DisableBMI2: true, DisableMOVBE: true}},
		}
		writeCodeHashes(t, out, progs, modes, jit.CompileBytes, mask)
	}
	if outARM64 != "" {
		modes := []jit.Options{{}, {Unchecked: true}, {Blind: true}, {Unchecked: true, Blind: true}}
		writeCodeHashes(t, outARM64, progs, modes, jit.CompileBytesARM64, maskARM64)
	}
}

type namedProgram struct {
	name string
	vp   *vm.Program
}

// writeCodeHashes writes to out the hash of the code compile emits for
// each program in each mode, with mask applied.
func writeCodeHashes(t *testing.T, out string, progs []namedProgram, modes []jit.Options, compile func(*vm.Program, jit.Options) ([]byte, error), mask func([]byte, []uint64)) {
	var report bytes.Buffer
	total := sha256.New()
	for _, p := range progs {
		masks := addresses(p.vp)
		for i, m := range modes {
			code, err := compile(p.vp, m)
			mask(code, masks)
			if dump := os.Getenv("UEBPF_CODEDUMP"); dump != "" && dump == p.name {
				os.WriteFile(fmt.Sprintf("%s.mode%d", out, i), code, 0o644)
			}
			sum := sha256.Sum256(code)
			line := fmt.Sprintf("%s mode%d %d %x %v\n", p.name, i, len(code), sum[:8], err)
			report.WriteString(line)
			total.Write([]byte(line))
		}
	}
	fmt.Fprintf(&report, "programs %d total %x\n", len(progs), total.Sum(nil)[:8])
	if err := os.WriteFile(out, report.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d programs, total %x", len(progs), total.Sum(nil)[:8])
}

// addresses returns the map addresses (and seeds) p's code may hold.
func addresses(p *vm.Program) []uint64 {
	base, arrays := engine.ArrayMaps(unsafe.Pointer(p))
	v := []uint64{}
	if base != 0 {
		v = append(v, base)
	}
	for _, a := range arrays {
		if a.Base != 0 {
			v = append(v, a.Base)
		}
	}
	for m := range p.Maps() {
		// An inline hash update embeds the map's random hash seed and
		// the addresses of its slots and locks.
		if h, _, _, _ := engine.HashMap(unsafe.Pointer(p), m); h != nil {
			if l, ok := engine.HashLayoutOf(h); ok {
				v = append(v, l.HashStart^engine.HashP0, uint64(l.Locks), uint64(l.Slots), uint64(l.Slots)+uint64(l.NumSlots)*uint64(l.SlotSize))
			}
		}
	}
	for pc, ins := range p.Instructions() {
		if ins.Opcode == asm.OpLDDW && ins.Src != 0 {
			v = append(v, engine.Constant(unsafe.Pointer(p), pc))
		}
	}
	return v
}

// mask zeroes the 8-byte little-endian windows of code that hold an
// address within 64 KiB after one of addrs, or one that looks like a heap
// or mmap address, plain or blinded with CompileBytes' key: inline hash
// updates embed addresses of the map's internals.
func mask(code []byte, addrs []uint64) {
	const key = 0x5eed5eed5eed5eed | 1<<31
	for i := 0; i+8 <= len(code); i++ {
		for _, v := range [2]uint64{binary.LittleEndian.Uint64(code[i:]), binary.LittleEndian.Uint64(code[i:]) ^ key} {
			hit := v>>40 == 0xc0 || v>>44 == 0x7 // Go heap arenas, mmap
			for _, a := range addrs {
				hit = hit || v >= a && v-a < 1<<16
			}
			if hit {
				clear(code[i : i+8])
				break
			}
		}
	}
}

// maskARM64 is mask for A64 code, where constants are MOVZ or MOVN and
// MOVKs to the same register: it clears the immediates of those whose
// value mask would clear.
func maskARM64(code []byte, addrs []uint64) {
	const key = 0x5eed5eed5eed5eed | 1<<31
	word := func(i int) uint32 { return binary.LittleEndian.Uint32(code[i:]) }
	isMov := func(w uint32) bool { return w&0x1f800000 == 0x12800000 }
	for i := 0; i+4 <= len(code); i += 4 {
		w := word(i)
		if !isMov(w) || w>>29&3 == 3 { // MOVZ or MOVN starts a constant
			continue
		}
		rd := w & 31
		v := uint64(w>>5&0xffff) << (16 * (w >> 21 & 3))
		if w>>29&3 == 0 {
			v = ^v
		}
		end := i + 4
		for ; end+4 <= len(code); end += 4 {
			k := word(end)
			if !isMov(k) || k>>29&3 != 3 || k&31 != rd {
				break
			}
			sh := 16 * (k >> 21 & 3)
			v = v&^(0xffff<<sh) | uint64(k>>5&0xffff)<<sh
		}
		for _, x := range [2]uint64{v, v ^ key} {
			hit := x>>40 == 0xc0 || x>>44 == 0x7
			for _, a := range addrs {
				hit = hit || x >= a && x-a < 1<<16
			}
			if hit {
				for j := i; j < end; j += 4 {
					binary.LittleEndian.PutUint32(code[j:], word(j)&^(0xffff<<5))
				}
				break
			}
		}
		i = end - 4
	}
}
