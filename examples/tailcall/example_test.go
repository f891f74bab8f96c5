package tailcall_test

import (
	"fmt"
	"log"
	"unsafe"

	"github.com/uebpf/uebpf"
)

// Op is struct op of tailcall.bpf.c.
type Op struct {
	Code uint32
	_    uint32
	A, B int64
}

func Example() {
	coll, err := uebpf.LoadFile("tailcall.bpf.o", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer coll.Close()
	for code, handler := range []string{"op_add", "op_sub", "op_mul"} {
		if err := coll.SetTailCall("handlers", uint32(code), handler); err != nil {
			log.Fatal(err)
		}
	}

	dispatch := coll.Program("dispatch")
	for _, op := range []Op{{Code: 0, A: 6, B: 7}, {Code: 1, A: 10, B: 3}, {Code: 2, A: 6, B: 7}, {Code: 5}} {
		r0, err := dispatch.RunPointer(unsafe.Pointer(&op), unsafe.Sizeof(op))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("op %d: %d\n", op.Code, int64(r0))
	}
	// Output:
	// op 0: 13
	// op 1: 7
	// op 2: 42
	// op 5: -1
}
