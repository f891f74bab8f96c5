package helpers_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// FuzzRingbufCommit runs programs that reserve records in two rings and
// commit, write and read them through arbitrary pointers derived from the
// records (off by any amount, already committed, of the other ring), on
// the interpreter and the JIT. Whatever they do, the process must not
// crash, a run may only fail with a *vm.RunError, and the readers must get
// only records of at most the size reserved.
//
// Each op is 3 bytes: kind, a, b. Records live in r6..r9 (slot b%4).
//
//	0 reserve a%200+1 bytes of ring b>>2&1 into slot b%4
//	1 submit slot b%4 + int8(a)
//	2 discard slot b%4 + int8(a)
//	3 store 8 bytes at slot b%4 + int8(a)
//	4 load 8 bytes at slot b%4 + int8(a)
func FuzzRingbufCommit(f *testing.F) {
	f.Add([]byte{0, 16, 0, 1, 0, 0})                    // reserve, submit
	f.Add([]byte{0, 16, 0, 1, 0, 0, 1, 0, 0})           // double submit
	f.Add([]byte{0, 16, 0, 2, 0, 0, 1, 0, 0})           // discard then submit
	f.Add([]byte{0, 16, 0, 1, 8, 0})                    // submit pointer+8
	f.Add([]byte{0, 16, 0, 3, 0xf8, 0, 1, 0, 0})        // write the header
	f.Add([]byte{0, 16, 0, 1, 0, 0, 3, 0, 0})           // write after submit
	f.Add([]byte{0, 16, 0, 0, 16, 5, 1, 0, 5, 1, 0, 0}) // two rings
	f.Fuzz(func(t *testing.T, data []byte) {
		var lines []string
		for len(data) >= 3 && len(lines) < 200 {
			kind, a, b := data[0]%5, data[1], data[2]
			data = data[3:]
			reg := fmt.Sprintf("%%r%d", 6+b%4)
			switch kind {
			case 0:
				lines = append(lines, fmt.Sprintf("lddw %%r1, map_by_fd(%d)", b>>2&1),
					fmt.Sprintf("mov %%r2, %d", int(a)%200+1), "mov %r3, 0", "call 131", "mov "+reg+", %r0")
			case 1, 2:
				lines = append(lines, "mov %r1, "+reg, fmt.Sprintf("add %%r1, %d", int8(a)), "mov %r2, 0",
					fmt.Sprintf("call %d", 131+int(kind)))
			case 3:
				lines = append(lines, fmt.Sprintf("stdw [%s%+d], 0x3ffffff0", reg, int8(a)))
			case 4:
				lines = append(lines, fmt.Sprintf("ldxdw %%r0, [%s%+d]", reg, int8(a)))
			}
		}
		src := "mov %r6, 0\nmov %r7, 0\nmov %r8, 0\nmov %r9, 0\n" + strings.Join(lines, "\n") + "\nmov %r0, 0\nexit"
		for _, e := range ringEngines() {
			ms, rds := newRings(t, 2)
			p := load(t, src, helpers.Standard(nil), ms...)
			_, err := e.run(t, p, vm.NewEnv())
			var re *vm.RunError
			if err != nil && !errors.As(err, &re) {
				t.Fatalf("%s: %v", e.name, err)
			}
			for _, rd := range rds {
				rd.SetDeadline(time.Now())
				for {
					rec, err := rd.Read()
					if errors.Is(err, os.ErrDeadlineExceeded) {
						break
					}
					if err != nil && !errors.Is(err, maps.ErrInvalid) {
						t.Fatalf("%s: read: %v", e.name, err)
					}
					if len(rec.RawSample) > 200 {
						t.Fatalf("%s: a sample of %d bytes", e.name, len(rec.RawSample))
					}
				}
			}
		}
	})
}
