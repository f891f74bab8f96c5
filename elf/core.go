package elf

import (
	"encoding/binary"
	"fmt"
	"maps"

	ciliumasm "github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/vm"
)

// poisonHelper is the first helper number given to the poisoned
// instructions of a program (DeferCOREErrors): cilium's marker for an
// unsatisfiable relocation, plus the relocation's index in the program.
const poisonHelper = btf.COREBadRelocationSentinel

// poison is an instruction whose CO-RE relocation the target could not
// satisfy, when loading defers the error to run time.
type poison struct {
	relo *btf.CORERelocation
	at   int // index in the program's instructions
}

// applyCORE resolves the program's CO-RE relocations against target and
// patches insns in place. A relocation the target cannot satisfy (cilium
// "poisons" it) is an error naming it, unless deferErrors is set; then
// applyCORE returns the poisoned instructions for deferPoison.
func applyCORE(insns ciliumasm.Instructions, target *btf.Spec, deferErrors bool) ([]poison, error) {
	var (
		relos []*btf.CORERelocation
		at    []int
	)
	for i := range insns {
		if r := btf.CORERelocationMetadata(&insns[i]); r != nil {
			relos = append(relos, r)
			at = append(at, i)
		}
	}
	if len(relos) == 0 {
		return nil, nil
	}
	if target == nil {
		return nil, fmt.Errorf("%w: first relocation %s", ErrNoTargetBTF, relos[0])
	}
	// Local type IDs (bpf_core_type_id_local) only need to be stable
	// within the program; a builder hands them out.
	var local btf.Builder
	fixups, err := btf.CORERelocate(relos, []*btf.Spec{target}, binary.LittleEndian, local.Add)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCORE, err)
	}
	var poisons []poison
	for i := range fixups {
		ins := &insns[at[i]]
		if err := fixups[i].Apply(ins); err != nil {
			return nil, fmt.Errorf("%w: relocation %s at instruction %d: %w", ErrCORE, relos[i], at[i], err)
		}
		if poisoned(ins) {
			if !deferErrors {
				return nil, fmt.Errorf("%w: relocation %s at instruction %d", ErrCORE, relos[i], at[i])
			}
			poisons = append(poisons, poison{relos[i], at[i]})
		}
	}
	return poisons, nil
}

// poisoned reports whether cilium replaced ins with its marker for an
// unsatisfiable relocation.
func poisoned(ins *ciliumasm.Instruction) bool {
	const sentinel = btf.COREBadRelocationSentinel
	return (ins.IsBuiltinCall() && ins.Constant == sentinel) ||
		(ins.OpCode.IsDWordLoad() && ins.Dst == ciliumasm.R10 && ins.Constant == sentinel)
}

// deferPoison turns every poisoned instruction into a call to a helper of
// its own that ends the run with ErrCORE naming the relocation, as the
// kernel would reject the program had the instruction been reachable. A
// poisoned lddw (two slots) becomes the call and a no-op jump, so offsets
// do not move. It returns the instructions and the helper set extended
// with those helpers.
func deferPoison(insns ciliumasm.Instructions, poisons []poison, helpers vm.Helpers, prog string) (ciliumasm.Instructions, vm.Helpers) {
	if len(poisons) == 0 {
		return insns, helpers
	}
	helpers = maps.Clone(helpers)
	if helpers == nil {
		helpers = vm.Helpers{}
	}
	out := make(ciliumasm.Instructions, 0, len(insns)+len(poisons))
	next := 0
	for k, p := range poisons {
		out = append(out, insns[next:p.at]...)
		num := poisonHelper + int32(k)
		call := ciliumasm.BuiltinFunc(num).Call()
		call.Metadata = insns[p.at].Metadata // keeps a function's symbol
		out = append(out, call)
		if insns[p.at].OpCode.IsDWordLoad() {
			out = append(out, ciliumasm.Instruction{OpCode: ciliumasm.Ja.Op(ciliumasm.ImmSource)})
		}
		next = p.at + 1
		err := fmt.Errorf("%w: program %s reached the instruction of relocation %s", ErrCORE, prog, p.relo)
		helpers[num] = vm.Helper{
			Name: "unsatisfied CO-RE relocation",
			Func: func(env *vm.Env, _, _, _, _, _ uint64) uint64 {
				env.Fail(err)
				return 0
			},
		}
	}
	return append(out, insns[next:]...), helpers
}
