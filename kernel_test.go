//go:build linux

package uebpf_test

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/kbridge"
)

// loadMixed loads testdata/mixed.bpf.o with Options.Kernel, skipping the
// test when the kernel refuses for lack of privileges.
func loadMixed(t *testing.T, opts *uebpf.Options) *uebpf.Collection {
	t.Helper()
	return loadKernelFile(t, "testdata/mixed.bpf.o", opts)
}

func loadKernelFile(t *testing.T, path string, opts *uebpf.Options) *uebpf.Collection {
	t.Helper()
	opts.Kernel = true
	coll, err := uebpf.LoadFile(path, opts)
	if errors.Is(err, uebpf.ErrKernelPermission) {
		t.Skip("kernel BPF not available (needs root or CAP_BPF+CAP_PERFMON)")
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		t.Skipf("kernel lacks a feature: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { coll.Close() })
	return coll
}

func u64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

// A value a VM program writes is what the kernel program reads on the
// thread's next syscall, and what the kernel writes the VM reads, through
// mmapped global data, an mmapped array and a hash map (syscall path).
func TestMixedObject(t *testing.T) {
	coll := loadMixed(t, &uebpf.Options{Variables: map[string]any{"factor": uint64(3)}})
	if coll.Kernel == nil || coll.Kernel.Programs["on_enter"] == nil {
		t.Fatal("kernel program on_enter not loaded")
	}
	for _, name := range []string{"set", "get", "get_hashed"} {
		if coll.Program(name) == nil {
			t.Fatalf("VM program %s not loaded", name)
		}
	}
	if _, ok := coll.Programs["on_enter"]; ok {
		t.Fatal("kernel program loaded into the VM")
	}
	for _, name := range []string{"shared", ".bss", ".rodata"} {
		if _, ok := coll.KernelMap(name).(*kbridge.Array); !ok {
			t.Errorf("map %s: %T, want an mmapped *kbridge.Array", name, coll.KernelMap(name))
		}
	}
	if _, ok := coll.KernelMap("hashed").(*kbridge.SyscallMap); !ok {
		t.Errorf("map hashed: %T, want a *kbridge.SyscallMap", coll.KernelMap("hashed"))
	}
	rr, err := kbridge.NewRingReader(coll.Kernel.Maps["events"], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	if err := coll.Variables["target_tid"].Set(uint32(tid)); err != nil {
		t.Fatal(err)
	}
	if err := coll.AttachKernel(); err != nil {
		t.Fatal(err)
	}

	var count uint64
	for _, value := range []uint64{42, 1000} {
		// VM → kernel.
		if _, err := coll.Program("set").Run(u64(value)); err != nil {
			t.Fatal(err)
		}
		unix.Getppid()
		// Kernel → VM.
		got, err := coll.Program("get").Run(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != value*3 {
			t.Errorf("after set(%d) and a syscall the kernel saw %d, want %d (factor 3)", value, got, value*3)
		}
		got, err = coll.Program("get_hashed").Run(u64(uint64(tid)))
		if err != nil {
			t.Fatal(err)
		}
		if got != value+1 {
			t.Errorf("hashed[tid] = %d, want %d (shared[0] as the kernel read it)", got, value+1)
		}
		var n uint64
		if err := coll.Map("shared").Lookup(uint32(1), &n); err != nil {
			t.Fatal(err)
		}
		if n <= count {
			t.Errorf("syscall counter %d after %d: the kernel's atomic adds are not visible", n, count)
		}
		count = n
	}

	// Every syscall of the thread sent shared[0] as the kernel read it.
	// Stop sending first: reading makes syscalls on this thread too.
	if err := coll.Variables["target_tid"].Set(uint32(0)); err != nil {
		t.Fatal(err)
	}
	rr.SetDeadline(time.Now().Add(5 * time.Second))
	seen := map[uint64]bool{}
	if _, err := rr.ReadBatch(0, func(s []byte) { seen[binary.NativeEndian.Uint64(s)] = true }); err != nil {
		t.Fatal(err)
	}
	if !seen[43] || !seen[1001] {
		t.Errorf("ring buffer records %v, want 43 and 1001 among them", seen)
	}

	// Detached, the kernel program no longer runs.
	if err := coll.DetachKernel(); err != nil {
		t.Fatal(err)
	}
	coll.Variables["target_tid"].Set(uint32(tid))
	coll.Program("set").Run(u64(7))
	unix.Getppid()
	if got, _ := coll.Program("get").Run(nil); got != 1000*3 {
		t.Errorf("after DetachKernel the kernel program still ran (saw %d)", got)
	}
	if err := coll.AttachKernel(); err != nil {
		t.Fatalf("attach again: %v", err)
	}
	if err := coll.AttachKernel(); err == nil {
		t.Error("attaching twice succeeded")
	}
}

// A VM program using a kernel-only map (a ring buffer) fails to load with
// an error naming the map; errors of the kernel side name what failed.
func TestMixedObjectErrors(t *testing.T) {
	loadMixed(t, &uebpf.Options{}) // skips without privileges

	spec, err := uebpf.LoadSpec("testdata/mixed.bpf.o")
	if err != nil {
		t.Fatal(err)
	}
	// A program of a kernel section loaded into the VM uses the ring
	// buffer, which has no userspace view.
	_, err = uebpf.NewCollection(spec, &uebpf.Options{Kernel: true, AllPrograms: true})
	if !errors.Is(err, elf.ErrKernelOnlyMap) {
		t.Errorf("AllPrograms with a kernel ring buffer: %v, want ErrKernelOnlyMap", err)
	}
	_, err = uebpf.NewCollection(spec, &uebpf.Options{Kernel: true, Variables: map[string]any{"nope": 1}})
	if !errors.Is(err, elf.ErrUnknownVariable) {
		t.Errorf("unknown variable: %v, want ErrUnknownVariable", err)
	}
	coll, err := uebpf.LoadFile("testdata/mixed.bpf.o", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	if err := coll.AttachKernel(); err == nil {
		t.Error("AttachKernel on a collection without kernel side succeeded")
	}
}

// AttachKernel attaches tracepoints and kprobes too. Both need tracefs;
// kprobes need the kprobe PMU or kprobe_events as well (the kprobe part is
// left out where the kernel has neither).
func TestAttachTracepointKprobe(t *testing.T) {
	tracefs := ""
	for _, dir := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(dir + "/events"); err == nil {
			tracefs = dir
			break
		}
	}
	if tracefs == "" {
		t.Skip("tracefs is not mounted: tracepoints and kprobes cannot be attached")
	}
	_, errPMU := os.Stat("/sys/bus/event_source/devices/kprobe")
	_, errEvents := os.Stat(tracefs + "/kprobe_events")
	kprobes := errPMU == nil || errEvents == nil

	spec, err := uebpf.LoadSpec("testdata/probes.bpf.o")
	if err != nil {
		t.Fatal(err)
	}
	if !kprobes {
		t.Log("the kernel has no kprobes: testing the tracepoint only")
		delete(spec.Programs, "kp_getppid")
	}
	coll, err := uebpf.NewCollection(spec, &uebpf.Options{Kernel: true})
	if errors.Is(err, uebpf.ErrKernelPermission) {
		t.Skip("kernel BPF not available (needs root or CAP_BPF+CAP_PERFMON)")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := coll.Variables["target_tid"].Set(uint32(unix.Gettid())); err != nil {
		t.Fatal(err)
	}
	if err := coll.AttachKernel(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		unix.Getppid()
	}
	got, err := coll.Program("counts").Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	tp, kp := got&0xffff, got>>16&0xffff
	if tp != 5 {
		t.Errorf("tracepoint counted %d getppid calls, want 5", tp)
	}
	if kprobes && kp != 5 {
		t.Errorf("kprobe counted %d getppid calls, want 5", kp)
	}
}

// Without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN the kernel refuses the
// kernel side, and the error says so (wrapping the kernel's EPERM). The
// capabilities are dropped from one locked thread only, which is then
// thrown away.
func TestMixedObjectNoPrivileges(t *testing.T) {
	loadMixed(t, &uebpf.Options{}).Close() // skips without privileges
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		for _, c := range []uint{unix.CAP_BPF, unix.CAP_PERFMON, unix.CAP_SYS_ADMIN} {
			data[c/32].Effective &^= 1 << (c % 32)
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		coll, err := uebpf.LoadFile("testdata/mixed.bpf.o", &uebpf.Options{Kernel: true})
		if err == nil {
			coll.Close()
		}
		errc <- err
	}()
	err := <-errc
	if !errors.Is(err, uebpf.ErrKernelPermission) || !errors.Is(err, unix.EPERM) {
		t.Fatalf("loading without capabilities: %v; want ErrKernelPermission wrapping EPERM", err)
	}
	t.Log(err)
}
