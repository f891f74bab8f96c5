package jit

import "github.com/uebpf/uebpf/vm"

// SlotSizes returns the code the back end emits for p with opts, the
// offset of each slot's first instruction and the end of the body.
func SlotSizes(p *vm.Program, opts Options) (code []byte, offsets []int32, bodyEnd int, err error) {
	c, err := arch.Compile(p, opts.backend(0, 1))
	if err != nil {
		return nil, nil, 0, err
	}
	defer c.Release()
	return append([]byte(nil), c.Bytes...), append([]int32(nil), c.Offsets...), c.BodyEnd, nil
}
