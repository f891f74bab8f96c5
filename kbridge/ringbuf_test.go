//go:build linux

package kbridge_test

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/uebpf/uebpf/kbridge"
	"github.com/uebpf/uebpf/maps"
)

// TestRingReader: a kernel program outputs 8-byte records into a 4 KiB
// ring and counts failed outputs; with nobody reading, the ring takes
// 4096/16 records and the rest are counted as drops. ReadBatch then
// delivers exactly the records that fit.
func TestRingReader(t *testing.T) {
	requireKernel(t)
	rb := newKernelMap(t, &ebpf.MapSpec{Name: "events", Type: ebpf.RingBuf, MaxEntries: 4096})
	defer rb.Close()
	drops := newKernelMap(t, &ebpf.MapSpec{Name: "drops", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	defer drops.Close()

	insns := asm.Instructions{
		asm.LoadImm(asm.R1, 0xfeedf00d, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, rb.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.Mov.Imm(asm.R3, 8),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
	}
	insns = append(insns, lookupPrologue(drops, 0)...)
	insns = append(insns,
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("miss"),
		asm.Return(),
	)
	prog := kernelProgram(t, "output", insns)

	r, err := kbridge.NewRingReader(rb, &kbridge.RingReaderOptions{Drops: drops})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	const runs = 1000
	const fit = 4096/16 - 1 // the kernel keeps the ring from filling completely
	runKernel(t, prog, runs)

	r.SetDeadline(time.Now().Add(5 * time.Second))
	got := 0
	for got < fit {
		n, err := r.ReadBatch(0, func(s []byte) {
			if len(s) != 8 || binary.NativeEndian.Uint64(s) != 0xfeedf00d {
				t.Errorf("record %x", s)
			}
		})
		if err != nil {
			t.Fatalf("after %d records: %v", got, err)
		}
		got += n
	}
	if got != fit {
		t.Errorf("read %d records, want %d", got, fit)
	}
	d, err := r.Drops()
	if err != nil {
		t.Fatal(err)
	}
	if d != runs-fit {
		t.Errorf("drops = %d, want %d", d, runs-fit)
	}
	if r.Records() != fit {
		t.Errorf("Records() = %d", r.Records())
	}

	// Nothing left: the deadline ends the wait.
	r.SetDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := r.ReadBatch(0, func([]byte) {}); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("empty ring: %v, want a deadline error", err)
	}
}

// TestUserRingBuf: Go produces records into a user ring buffer; a kernel
// program drains them with bpf_user_ringbuf_drain and sums their values
// into an array.
func TestUserRingBuf(t *testing.T) {
	requireKernel(t)
	urb := newKernelMap(t, &ebpf.MapSpec{Name: "commands", Type: ebpf.UserRingbuf, MaxEntries: 4096})
	defer urb.Close()
	sum := newKernelMap(t, &ebpf.MapSpec{Name: "sum", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	defer sum.Close()

	// main: r0 = bpf_user_ringbuf_drain(urb, cb, NULL, 0)
	// cb(dynptr, ctx): bpf_dynptr_read(fp-8, 8, dynptr, 0, 0); sum[0] += *(fp-8); return 0
	insns := asm.Instructions{
		asm.LoadMapPtr(asm.R1, urb.FD()),
		asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R2, Src: asm.PseudoFunc, Constant: -1}.WithReference("cb"),
		asm.Mov.Imm(asm.R3, 0),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnUserRingbufDrain.Call(),
		asm.Return(),

		asm.Mov.Reg(asm.R3, asm.R1).WithSymbol("cb"),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, -8),
		asm.Mov.Imm(asm.R2, 8),
		asm.Mov.Imm(asm.R4, 0),
		asm.Mov.Imm(asm.R5, 0),
		asm.FnDynptrRead.Call(),
		asm.JNE.Imm(asm.R0, 0, "done"),
		asm.LoadMem(asm.R6, asm.RFP, -8, asm.DWord),
	}
	insns = append(insns, lookupPrologue(sum, 0)...)
	insns = append(insns,
		asm.StoreXAdd(asm.R0, asm.R6, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("miss"),
		asm.Return(),
	)
	// Programs with callbacks need BTF function information.
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	voidp := &btf.Pointer{Target: &btf.Void{}}
	proto := &btf.FuncProto{Return: long, Params: []btf.FuncParam{{Name: "a", Type: voidp}, {Name: "b", Type: voidp}}}
	insns[0] = btf.WithFuncMetadata(insns[0], &btf.Func{Name: "drain", Type: proto, Linkage: btf.StaticFunc})
	insns[6] = btf.WithFuncMetadata(insns[6], &btf.Func{Name: "cb", Type: proto, Linkage: btf.StaticFunc})
	prog := kernelProgram(t, "drain", insns)

	u, err := kbridge.NewUserRingBuf(urb)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()

	// Several rounds, so the positions wrap around the 4 KiB data area.
	var want uint64
	for round := range 5 {
		records := 0
		for i := uint64(1); ; i++ {
			s, err := u.Reserve(8)
			if errors.Is(err, kbridge.ErrRingFull) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			records++
			binary.NativeEndian.PutUint64(s, i*1000+uint64(round))
			if i%7 == 0 {
				u.Discard(s)
				continue
			}
			want += i*1000 + uint64(round)
			u.Submit(s)
		}
		if records != 4096/16 {
			t.Fatalf("round %d: %d records fit, want %d", round, records, 4096/16)
		}
		// The kernel drains at most what the ring holds per call.
		for u.Free() < 4096 {
			if n := int32(runKernel(t, prog, 1)); n < 0 {
				t.Fatalf("bpf_user_ringbuf_drain = %d", n)
			}
		}
	}
	var got uint64
	if err := sum.Lookup(uint32(0), &got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("kernel summed %d, want %d", got, want)
	}
	if _, err := u.Reserve(4096); !errors.Is(err, maps.ErrTooBig) {
		t.Errorf("Reserve larger than the ring: %v", err)
	}
}
