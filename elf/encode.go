package elf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	ciliumasm "github.com/cilium/ebpf/asm"

	"github.com/uebpf/uebpf/asm"
)

// mapResolver returns the index in the collection's map table of the map
// (or data section) a program refers to by name.
type mapResolver func(name string) (int, error)

// encode turns the instructions of one program into VM instruction slots.
// cilium/ebpf's linker has already appended the functions the program calls
// (each starting with an instruction that carries its symbol); encode
// resolves what is still symbolic:
//
//   - calls and function pointers (call src 1, lddw src 4) become offsets
//     relative to the next slot, as the kernel expects;
//   - map references (lddw src 1) and global-data references (lddw src 2,
//     offset in the upper half) get the map's index in the low 32 bits.
//
// insns is not modified.
func encode(insns ciliumasm.Instructions, resolveMap mapResolver) ([]asm.Instruction, error) {
	symbols := make(map[string]int64)
	var raw int64
	for i := range insns {
		if sym := insns[i].Symbol(); sym != "" {
			if _, dup := symbols[sym]; dup {
				return nil, fmt.Errorf("%w: symbol %q defined twice", ErrMissingSymbol, sym)
			}
			symbols[sym] = raw
		}
		raw += int64(insns[i].Width())
	}

	var buf bytes.Buffer
	buf.Grow(int(raw) * ciliumasm.InstructionSize)
	raw = 0
	for i := range insns {
		ins := insns[i] // a copy: fixing it up leaves the spec alone
		if err := resolve(&ins, raw, symbols, resolveMap); err != nil {
			return nil, fmt.Errorf("instruction %d: %w", raw, err)
		}
		if _, err := ins.Marshal(&buf, binary.LittleEndian); err != nil {
			return nil, fmt.Errorf("instruction %d: %w", raw, err)
		}
		raw += int64(ins.Width())
	}
	return asm.Decode(buf.Bytes())
}

// resolve fixes up one instruction at raw slot off.
func resolve(ins *ciliumasm.Instruction, off int64, symbols map[string]int64, resolveMap mapResolver) error {
	ref := ins.Reference()
	switch {
	case ins.IsKfuncCall():
		return fmt.Errorf("%w: call to kfunc %q", ErrUnsupportedRelocation, ref)
	case ref == "":
		if ins.IsBuiltinCall() && (ins.Constant < 0 || ins.Constant > math.MaxInt32) {
			return fmt.Errorf("%w: helper number %d", ErrUnsupportedRelocation, ins.Constant)
		}
		return nil
	case ins.IsFunctionReference(),
		ins.OpCode.JumpOp() == ciliumasm.Ja && ins.OpCode.Class() == ciliumasm.Jump32Class:
		target, ok := symbols[ref]
		if !ok {
			return fmt.Errorf("%w: function %q", ErrMissingSymbol, ref)
		}
		ins.Constant = target - off - 1
		return nil
	case ins.OpCode.Class().IsJump():
		target, ok := symbols[ref]
		if !ok {
			return fmt.Errorf("%w: jump target %q", ErrMissingSymbol, ref)
		}
		if d := target - off - 1; d < math.MinInt16 || d > math.MaxInt16 {
			return fmt.Errorf("jump to %q: offset %d out of range", ref, d)
		} else {
			ins.Offset = int16(d)
		}
		return nil
	case ins.IsLoadFromMap():
		idx, err := resolveMap(ref)
		if err != nil {
			return err
		}
		// Keep the data offset of BPF_PSEUDO_MAP_VALUE in the upper half.
		ins.Constant = int64(uint64(ins.Constant)&^math.MaxUint32 | uint64(idx))
		return nil
	}
	return fmt.Errorf("%w: reference to %q (extern, ksym or kconfig symbol?) in %v", ErrUnsupportedRelocation, ref, *ins)
}
