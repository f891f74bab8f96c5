package filter_test

import (
	"encoding/binary"
	"fmt"

	"github.com/uebpf/uebpf/filter"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

func ExampleCompile() {
	fields, err := filter.ParseSpec("status:u16,latency:f64,path:string[32]")
	if err != nil {
		panic(err)
	}
	f, err := filter.Compile(`(status >= 500 || latency > 0.25) && path == "/api/*"`, fields)
	if err != nil {
		panic(err)
	}
	p, err := vm.Load(&vm.ProgramSpec{Instructions: f.Instructions()}, nil)
	if err != nil {
		panic(err)
	}
	if _, err := verifier.Verify(p, &verifier.Options{ContextSize: f.RecordSize()}); err != nil {
		panic(err)
	}
	record := make([]byte, f.RecordSize())
	binary.LittleEndian.PutUint16(record[0:], 503)
	copy(record[16:], "/api/users")
	keep, err := p.Run(record)
	fmt.Println(f.Uses(), f.RecordSize(), keep, err)
	// Output: [status latency path] 48 1 <nil>
}

func ExampleCompile_error() {
	fields, _ := filter.ParseSpec("status:u16,path:string[32]")
	_, err := filter.Compile(`status == "ok"`, fields)
	fmt.Println(err)
	// Output: column 8: cannot compare an integer with a string
}

func ExampleEval() {
	fields, _ := filter.ParseSpec("flags:u8")
	// LTTng binds == tighter than &: this is (flags & 2) == 2.
	keep, err := filter.Eval("flags & 2 == 2", fields, []byte{2})
	fmt.Println(keep, err)
	// Output: true <nil>
}
