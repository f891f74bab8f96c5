package filter

import (
	"errors"

	"github.com/uebpf/uebpf/asm"
)

func generate(n *node) ([]asm.Instruction, error) {
	return nil, errors.New("code generation: not yet implemented")
}
