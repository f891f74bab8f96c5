package elf

import (
	"fmt"

	ciliumasm "github.com/cilium/ebpf/asm"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/vm"
)

// checkHelpers checks every helper call of code against the helper set:
// the helper must be provided, and a GPL-only one needs a GPL-compatible
// license. vm.Load checks the first again; checking here gives the error
// the helper's name.
func checkHelpers(code []asm.Instruction, helpers vm.Helpers, license string) error {
	for i, ins := range code {
		if ins.Opcode != asm.OpCall || ins.Src != 0 {
			continue
		}
		h, ok := helpers[ins.Imm]
		if !ok || h.Func == nil {
			return fmt.Errorf("instruction %d: %w: %s", i, vm.ErrHelperMissing, helperName(ins.Imm, h))
		}
		if h.Proto != nil && h.Proto.GPLOnly && !gplCompatible(license) {
			return fmt.Errorf("instruction %d: %w: %s, license %q", i, ErrGPLOnly, helperName(ins.Imm, h), license)
		}
	}
	return nil
}

// helperName names helper number n for messages: "bpf_map_lookup_elem (1)".
func helperName(n int32, h vm.Helper) string {
	if h.Name != "" {
		return fmt.Sprintf("%s (%d)", h.Name, n)
	}
	name := ciliumasm.BuiltinFunc(n).String()
	if len(name) > 2 && name[:2] == "Fn" {
		return fmt.Sprintf("helper %d (%s)", n, name[2:])
	}
	return fmt.Sprintf("helper %d", n)
}
