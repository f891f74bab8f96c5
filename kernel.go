package uebpf

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/kbridge"
	uemaps "github.com/uebpf/uebpf/maps"
)

// Mixed objects: with Options.Kernel, one object holds kernel programs
// (raw_tp/..., tracepoint/..., kprobe/...) and userspace programs
// (uebpf/...) that share maps. The kernel programs and every map go to the
// kernel through cilium/ebpf; the VM programs are bound to those same
// kernel maps through package kbridge: arrays and global data (.data,
// .bss, .rodata) are mmapped, so VM programs and Go code access them at
// memory speed, and hash-like maps go through the bpf() syscall (values
// are read-only copies; see kbridge). Ring buffers and other maps with no
// userspace view are kernel-only: read them through Collection.Kernel
// (kbridge.NewRingReader), and a VM program using one fails to load.
// Program arrays are not shared: each side has its own.

// ErrKernelPermission is wrapped, with the kernel's error, when the kernel
// refuses to create the kernel side of a collection for lack of
// privileges.
var ErrKernelPermission = errors.New("loading kernel programs and maps needs root (or CAP_BPF with CAP_PERFMON)")

// ErrNoTracefs is wrapped, with cilium/ebpf's error, when a tracepoint
// or kprobe cannot be attached because tracefs is not mounted.
var ErrNoTracefs = errors.New("attaching tracepoints and kprobes needs tracefs (mount -t tracefs nodev /sys/kernel/tracing)")

// kernelSide is what a collection loaded with Options.Kernel holds in the
// kernel.
type kernelSide struct {
	spec  *ebpf.CollectionSpec // kernel programs only, as loaded
	coll  *ebpf.Collection
	maps  map[string]kbridge.Map
	links []link.Link
}

// loadKernel creates the kernel side of spec: all maps, with BPF_F_MMAPABLE
// forced on arrays so that the VM shares their memory, and the programs of
// kernel sections. opts.Variables are set on the spec first, since a
// frozen .rodata cannot change afterwards.
func loadKernel(spec *ebpf.CollectionSpec, opts *Options) (*kernelSide, map[string]uemaps.Map, error) {
	ks := spec.Copy()
	for name, value := range opts.Variables {
		vs, ok := ks.Variables[name]
		if !ok {
			return nil, nil, fmt.Errorf("kernel side: %w: %q", elf.ErrUnknownVariable, name)
		}
		if err := vs.Set(value); err != nil {
			return nil, nil, fmt.Errorf("kernel side: variable %s: %w", name, err)
		}
	}
	for name, ps := range ks.Programs {
		if elf.IsUserspaceSection(ps.SectionName) {
			delete(ks.Programs, name)
		}
	}
	for _, ms := range ks.Maps {
		// Pinned maps keep their flags: an existing pin must match.
		if ms.Type == ebpf.Array && ms.Pinning == ebpf.PinNone {
			ms.Flags |= uemaps.FlagMmapable
		}
	}
	var kopts ebpf.CollectionOptions
	if opts.KernelOptions != nil {
		kopts = *opts.KernelOptions
	}
	coll, err := ebpf.NewCollectionWithOptions(ks, kopts)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, nil, fmt.Errorf("kernel side: %w: %w", ErrKernelPermission, err)
		}
		return nil, nil, fmt.Errorf("kernel side: %w", err)
	}
	shared, err := kbridge.FromCollection(coll)
	if err != nil {
		coll.Close()
		return nil, nil, fmt.Errorf("kernel side: %w", err)
	}
	side := &kernelSide{spec: ks, coll: coll, maps: shared}
	repl := make(map[string]uemaps.Map, len(coll.Maps))
	for name, m := range coll.Maps {
		if km, ok := shared[name]; ok {
			repl[name] = km
		} else if m.Type() != ebpf.ProgramArray {
			repl[name] = nil // kernel-only: ring buffers, map-in-map, ...
		}
	}
	return side, repl, nil
}

// attach attaches every kernel program, in name order. On error the links
// made so far stay in k.links (Close or detach releases them).
func (k *kernelSide) attach() error {
	if len(k.links) > 0 {
		return errors.New("uebpf: kernel programs are already attached")
	}
	for _, name := range slices.Sorted(maps.Keys(k.coll.Programs)) {
		ps := k.spec.Programs[name]
		l, err := attachProgram(ps, k.coll.Programs[name])
		if err != nil && (ps.Type == ebpf.TracePoint || ps.Type == ebpf.Kprobe) && !tracefsMounted() {
			err = fmt.Errorf("%w: %w", ErrNoTracefs, err)
		}
		if err != nil {
			return fmt.Errorf("uebpf: attaching kernel program %s (section %s): %w", name, ps.SectionName, err)
		}
		k.links = append(k.links, l)
	}
	return nil
}

// attachProgram attaches one program where its section says.
func attachProgram(ps *ebpf.ProgramSpec, p *ebpf.Program) (link.Link, error) {
	target := ps.AttachTo
	if target == "" {
		if _, rest, ok := strings.Cut(ps.SectionName, "/"); ok {
			target = rest
		}
	}
	switch ps.Type {
	case ebpf.RawTracepoint, ebpf.RawTracepointWritable:
		if target == "" {
			return nil, errors.New("section names no tracepoint (raw_tp/<name>)")
		}
		return link.AttachRawTracepoint(link.RawTracepointOptions{Name: target, Program: p})
	case ebpf.TracePoint:
		group, name, ok := strings.Cut(target, "/")
		if !ok {
			return nil, fmt.Errorf("tracepoint %q: want tracepoint/<group>/<name>", target)
		}
		return link.Tracepoint(group, name, p, nil)
	case ebpf.Kprobe:
		if target == "" {
			return nil, errors.New("section names no function (kprobe/<function>)")
		}
		if strings.HasPrefix(ps.SectionName, "kretprobe") {
			return link.Kretprobe(target, p, nil)
		}
		return link.Kprobe(target, p, nil)
	case ebpf.Tracing:
		return link.AttachTracing(link.TracingOptions{Program: p})
	}
	return nil, fmt.Errorf("program type %s: no automatic attachment; attach Collection.Kernel.Programs[%q] yourself", ps.Type, ps.Name)
}

// tracefsMounted reports whether /proc/self/mountinfo lists a tracefs
// mount, or a debugfs one (which has tracefs in its tracing directory).
func tracefsMounted() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return true // cannot tell: cilium/ebpf's error stands alone
	}
	for line := range strings.Lines(string(b)) {
		// The file system type follows the " - " separator.
		if _, fs, ok := strings.Cut(line, " - "); ok && (strings.HasPrefix(fs, "tracefs ") || strings.HasPrefix(fs, "debugfs ")) {
			return true
		}
	}
	return false
}

// detach closes the links.
func (k *kernelSide) detach() error {
	var errs []error
	for _, l := range k.links {
		errs = append(errs, l.Close())
	}
	k.links = nil
	return errors.Join(errs...)
}

// close releases the links, the VM's views of the kernel maps and the
// kernel collection. Nil-safe.
func (k *kernelSide) close() error {
	if k == nil {
		return nil
	}
	errs := []error{k.detach()}
	for _, m := range k.maps {
		errs = append(errs, m.Close())
	}
	k.coll.Close()
	return errors.Join(errs...)
}

// AttachKernel attaches the kernel programs of a collection loaded with
// Options.Kernel: raw tracepoints (raw_tp/<name>), tracepoints
// (tracepoint/<group>/<name>), kprobes and kretprobes (kprobe/<function>),
// and fentry/fexit/tp_btf programs. Programs of other types are an error:
// attach them through c.Kernel. Close (or DetachKernel) detaches them.
func (c *Collection) AttachKernel() error {
	if c.kernel == nil {
		return errors.New("uebpf: the collection has no kernel side (load it with Options.Kernel)")
	}
	return c.kernel.attach()
}

// DetachKernel detaches the kernel programs AttachKernel attached; the
// programs and maps stay loaded.
func (c *Collection) DetachKernel() error {
	if c.kernel == nil {
		return nil
	}
	if err := c.kernel.detach(); err != nil {
		return fmt.Errorf("uebpf: detaching kernel programs: %w", err)
	}
	return nil
}

// KernelMap returns the kbridge view of the kernel map called name (an
// *kbridge.Array for arrays and global data, else a *kbridge.SyscallMap),
// or nil when the collection has no kernel side or the map has no
// userspace view.
func (c *Collection) KernelMap(name string) kbridge.Map {
	if c.kernel == nil {
		return nil
	}
	return c.kernel.maps[name]
}

// closeKernel releases the kernel side, after the VM side is closed.
func (c *Collection) closeKernel() error {
	err := c.kernel.close()
	c.kernel, c.Kernel = nil, nil
	return err
}

// kernelSideOf loads the kernel side when opts.Kernel asks for it and
// returns it with the VM's map replacements and the variables still to set
// on the VM side (none then: they went into the kernel's spec).
func kernelSideOf(spec *ebpf.CollectionSpec, opts *Options) (*kernelSide, map[string]uemaps.Map, map[string]any, error) {
	if !opts.Kernel {
		return nil, nil, opts.Variables, nil
	}
	side, repl, err := loadKernel(spec, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	return side, repl, nil, nil
}
