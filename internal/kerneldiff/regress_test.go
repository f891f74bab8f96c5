package kerneldiff

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Mismatches TestKernelAgreement found, kept as regression tests.

// TestArrayUpdateErrnos: bpf_map_update_elem on an array must fail with
// the errno Linux's array_map_update_elem returns, whose checks run in
// the order unknown flags (EINVAL), index (E2BIG), BPF_NOEXIST (EEXIST),
// BPF_F_LOCK without a spin lock (EINVAL). The bpf() syscall refuses
// BPF_F_LOCK before the map sees it. Found by seeds 3 (flags 5: EEXIST,
// uebpf said EINVAL) and 36 (key 1, BPF_NOEXIST: E2BIG, uebpf said
// EEXIST). When root, the table is checked against the kernel too.
func TestArrayUpdateErrnos(t *testing.T) {
	const (
		einval = -int64(unix.EINVAL)
		e2big  = -int64(unix.E2BIG)
		eexist = -int64(unix.EEXIST)
	)
	tests := []struct {
		key        uint32
		flags      uint64
		prog, user int64 // from a program; from Go (the syscall)
	}{
		{0, 0, 0, 0},
		{0, 1, eexist, eexist},
		{0, 2, 0, 0},
		{0, 3, einval, einval},
		{0, 4, einval, einval},
		{0, 5, eexist, einval},
		{0, 6, einval, einval},
		{0, 8, einval, einval},
		{1, 0, e2big, e2big},
		{1, 1, e2big, e2big},
		{1, 2, e2big, e2big},
		{1, 3, einval, einval},
		{1, 4, e2big, einval},
		{1, 5, e2big, einval},
		{0xffffffff, 1, e2big, e2big},
	}
	kernel := kernelUnavailable() == ""
	for _, tt := range tests {
		t.Run(fmt.Sprintf("key%d/flags%d", tt.key, tt.flags), func(t *testing.T) {
			insns := updateProgram(tt.key, tt.flags)
			m, err := maps.New(&maps.Spec{Name: "upd", Type: maps.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
			if err != nil {
				t.Fatal(err)
			}
			vp, err := vm.Load(&vm.ProgramSpec{Instructions: insns, Maps: []vm.Map{m}},
				&vm.Options{Helpers: helpers.Standard(nil)})
			if err != nil {
				t.Fatal(err)
			}
			runs := map[string]func([]byte) (uint64, error){"interpreter": vp.Run}
			if jit.Supported {
				jp, err := jit.Compile(vp, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer jp.Close()
				runs["jit"] = jp.Run
			}
			for name, run := range runs {
				r0, err := run(make([]byte, 8))
				if err != nil || int64(r0) != tt.prog {
					t.Errorf("%s: r0 = %d, %v; want %d", name, int64(r0), err, tt.prog)
				}
			}
			if got := maps.Errno(m.Update(tt.key, uint64(0), maps.UpdateFlags(tt.flags))); got != tt.user {
				t.Errorf("Go-side Update: errno %d, want %d", got, tt.user)
			}
			if !kernel {
				return
			}
			km, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer km.Close()
			ks := &kernelSide{m: km}
			kinsns, err := ks.instructions(insns, nil)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, Instructions: kinsns, License: "GPL"})
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			ret, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, packetSize)})
			if err != nil || int64(int32(ret)) != tt.prog {
				t.Errorf("kernel program: r0 = %d, %v; want %d", int32(ret), err, tt.prog)
			}
			kerr := km.Update(tt.key, uint64(0), ebpf.MapUpdateFlags(tt.flags))
			var errno unix.Errno
			got := int64(0)
			if errors.As(kerr, &errno) {
				got = -int64(errno)
			} else if kerr != nil {
				t.Fatalf("kernel Update: %v", kerr)
			}
			if got != tt.user {
				t.Errorf("kernel Update: errno %d, want %d", got, tt.user)
			}
		})
	}
}

// updateProgram returns r0 = bpf_map_update_elem(map 0, &key, &u64(0), flags).
func updateProgram(key uint32, flags uint64) []asm.Instruction {
	insns := []asm.Instruction{
		{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeW, Dst: regFP, Offset: -4, Imm: int32(key)},
		{Opcode: asm.ClassST | asm.ModeMEM | asm.SizeDW, Dst: regFP, Offset: -16},
		{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 2, Src: regFP},
		{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 2, Imm: -4},
		{Opcode: asm.ClassALU64 | asm.AluMOV | asm.SourceX, Dst: 3, Src: regFP},
		{Opcode: asm.ClassALU64 | asm.AluADD, Dst: 3, Imm: -16},
		{Opcode: asm.ClassALU64 | asm.AluMOV, Dst: 4, Imm: int32(flags)},
		{Opcode: asm.OpLDDW, Dst: 1, Src: asm.PseudoMapFD, Imm: MapIndex}, {},
		{Opcode: asm.OpCall, Imm: helperMapUpdate},
		{Opcode: asm.OpExit},
	}
	return insns
}

// TestFetchProbeProgram: the program FetchPrecisionBug runs returns 2 on
// uebpf's engines (the fetch reads the 0 stored on the path taken), so a
// kernel that returns 1 is the one in the wrong. Found by seed 14805:
// the kernel pruned the path where a fetch from the stack read a
// different value, and ran a branch hard-wired for the other path.
func TestFetchProbeProgram(t *testing.T) {
	vp, err := vm.Load(&vm.ProgramSpec{Instructions: fetchProbe()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	skb := make([]byte, 8)
	skb[0] = packetSize - EthHeaderSize // skb->len
	runs := map[string]func([]byte) (uint64, error){"interpreter": vp.Run}
	if jit.Supported {
		jp, err := jit.Compile(vp, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer jp.Close()
		runs["jit"] = jp.Run
	}
	for name, run := range runs {
		if r0, err := run(skb); r0 != 2 || err != nil {
			t.Errorf("%s: r0 = %d, %v; want 2", name, r0, err)
		}
	}
	if why := kernelUnavailable(); why != "" {
		t.Log(why)
		return
	}
	bug, err := FetchPrecisionBug()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel has the atomic fetch precision bug: %v", bug)
}
