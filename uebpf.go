package uebpf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/uebpf/uebpf/elf"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	uemaps "github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Collection is a loaded object file: programs ready to run and maps.
type Collection struct {
	// Programs by function name.
	Programs map[string]*Program
	// Maps by name; global data sections by section name (".data" ...).
	Maps map[string]uemaps.Map
	// Variables are the object's global variables, by name.
	Variables map[string]*Variable
	// KernelSpec holds the kernel programs (not loaded) and the maps, for
	// the kernel bridge; nil when the object has no kernel program.
	KernelSpec *ebpf.CollectionSpec
	// Kernel is the kernel side of a collection loaded with
	// Options.Kernel: its kernel programs and maps; nil otherwise.
	Kernel *ebpf.Collection

	elf    *elf.Collection
	kernel *kernelSide
}

// Variable is a global variable of a loaded collection (see
// elf.Variable).
type Variable = elf.Variable

// Program is a loaded program.
type Program struct {
	// jit is nil when the interpreter runs the program. It is the first
	// field: the JIT's assembly reads it (run_linux_amd64.go).
	jit     *jit.Program
	name    string
	section string
	vm      *vm.Program
	// plainMin and stacklessMin are the shortest contexts with which Run
	// jumps straight to the JIT's fastest paths (run_linux_amd64.s):
	// contextSize while the JIT runs the program there (jitPath), else
	// more than any length.
	plainMin, stacklessMin int
	// directMin is the shortest context with which Run calls direct, the
	// JIT's direct entry of code that takes neither fast path (checked
	// code that reads memory), through runDirectABI: contextSize while
	// there is one, else more than any length.
	directMin int
	direct    func(ctx []byte) (uint64, error)
	// contextSize is the context size the verifier proved the program
	// safe for (-1: not verified).
	contextSize int
}

// LoadSpec parses an object file without loading it, so that its spec
// (variables, maps) can be changed before NewCollection.
func LoadSpec(path string) (*ebpf.CollectionSpec, error) { return elf.LoadSpec(path) }

// LoadFile loads the object file at path.
func LoadFile(path string, opts *Options) (*Collection, error) {
	spec, err := elf.LoadSpec(path)
	if err != nil {
		return nil, fmt.Errorf("uebpf: %w", err)
	}
	coll, err := NewCollection(spec, opts)
	if err != nil {
		return nil, fmt.Errorf("uebpf: %s: %w", path, err)
	}
	return coll, nil
}

// Load loads an object file.
func Load(r io.ReaderAt, opts *Options) (*Collection, error) {
	spec, err := elf.LoadSpecFromReader(r)
	if err != nil {
		return nil, fmt.Errorf("uebpf: %w", err)
	}
	coll, err := NewCollection(spec, opts)
	if err != nil {
		return nil, fmt.Errorf("uebpf: %w", err)
	}
	return coll, nil
}

// NewCollection loads a parsed object. spec is not modified.
func NewCollection(spec *ebpf.CollectionSpec, opts *Options) (*Collection, error) {
	if opts == nil {
		opts = &Options{}
	}
	set := helperSet(opts)
	kside, repl, vars, err := kernelSideOf(spec, opts)
	if err != nil {
		return nil, err
	}
	ec, err := elf.NewCollection(spec, &elf.Options{
		MapReplacements: repl,
		Helpers:         set,
		Budget:          opts.Budget,
		Timeout:         opts.Timeout,
		MaxMapMemory:    opts.MaxMapMemory,
		TargetBTF:       opts.TargetBTF,
		DeferCOREErrors: opts.DeferCOREErrors,
		AllPrograms:     opts.AllPrograms,
		Variables:       vars,
	})
	if err != nil {
		kside.close()
		return nil, err
	}
	coll := &Collection{
		Programs:   make(map[string]*Program, len(ec.Programs)),
		Maps:       ec.Maps,
		Variables:  ec.Variables,
		KernelSpec: ec.KernelSpec,
		elf:        ec,
		kernel:     kside,
	}
	if kside != nil {
		coll.Kernel = kside.coll
	}
	for _, name := range slices.Sorted(maps.Keys(ec.Programs)) {
		ep := ec.Programs[name]
		p := &Program{name: name, section: ep.Section, vm: ep.VM}
		if p.contextSize, err = verify(ep, opts); err != nil {
			coll.Close()
			return nil, err
		}
		if p.jit, err = compile(ep.VM, opts.Engine, p.Verified(), p.contextSize); err != nil {
			coll.Close()
			return nil, fmt.Errorf("program %s: %w", name, err)
		}
		p.plainMin, p.stacklessMin, p.directMin = math.MaxInt, math.MaxInt, math.MaxInt
		if plain, stackless := jitPath(p.jit); plain {
			p.plainMin = p.contextSize
			if stackless {
				p.stacklessMin = p.contextSize
			}
		}
		if p.jit != nil {
			if p.direct = p.jit.Direct(); p.direct != nil {
				p.directMin = p.contextSize
			}
		}
		coll.Programs[name] = p
	}
	return coll, nil
}

// helperSet returns the helper set of opts: a copy of Options.Helpers,
// so that the caller may change its set afterwards, or the standard set.
func helperSet(opts *Options) vm.Helpers {
	if opts.Helpers != nil {
		return maps.Clone(opts.Helpers)
	}
	return helpers.Standard(&helpers.Config{Output: opts.TraceOutput})
}

// compile prepares p for engine; nil means the interpreter runs it.
// Verified programs compile without run-time checks: Unchecked rather
// than a jit.Options.Verified proof, because every program of the
// collection is verified, so tail-call targets may run unchecked too;
// their runs refuse contexts shorter than contextSize, what they were
// verified for.
func compile(p *vm.Program, engine Engine, verified bool, contextSize int) (*jit.Program, error) {
	opts := &jit.Options{Unchecked: verified, ContextSize: contextSize}
	switch engine {
	case EngineInterpreter:
		return nil, nil
	case EngineJIT:
		return jit.Compile(p, opts)
	case EngineAuto:
		jp, err := jit.Compile(p, opts)
		if err != nil {
			return nil, nil // the interpreter runs what the JIT cannot
		}
		return jp, nil
	}
	return nil, fmt.Errorf("unknown engine %d", engine)
}

// Program returns the program called name, or nil.
func (c *Collection) Program(name string) *Program { return c.Programs[name] }

// Map returns the map called name, or nil.
func (c *Collection) Map(name string) uemaps.Map { return c.Maps[name] }

// SetTailCall stores the collection's program prog at index of the program
// array mapName, for bpf_tail_call.
func (c *Collection) SetTailCall(mapName string, index uint32, prog string) error {
	return c.elf.SetTailCall(mapName, index, prog)
}

// Close releases the JIT code of the programs and closes the maps. No
// program may run during or after Close.
func (c *Collection) Close() error {
	var errs []error
	for _, p := range c.Programs {
		if p.jit != nil {
			p.plainMin, p.stacklessMin, p.directMin = math.MaxInt, math.MaxInt, math.MaxInt
			errs = append(errs, p.jit.Close())
		}
	}
	if c.elf != nil {
		errs = append(errs, c.elf.Close())
	}
	errs = append(errs, c.closeKernel())
	return errors.Join(errs...)
}

// Name returns the program's function name.
func (p *Program) Name() string { return p.name }

// Section returns the ELF section the program came from.
func (p *Program) Section() string { return p.section }

// Engine returns the engine that runs the program: EngineJIT or
// EngineInterpreter.
func (p *Program) Engine() Engine {
	if p.jit != nil {
		return EngineJIT
	}
	return EngineInterpreter
}

// Verified reports whether the verifier proved the program safe, so that
// the JIT runs it without run-time memory checks.
func (p *Program) Verified() bool { return p.contextSize >= 0 }

// ContextSize returns the context size the program was verified for: runs
// need a context at least that long. It is -1 for an unverified program.
func (p *Program) ContextSize() int { return p.contextSize }

// VM returns the loaded program, for tools that work on vm programs.
func (p *Program) VM() *vm.Program { return p.vm }

// Run runs the program with ctx as its context (r1 = its address, r2 = its
// length) and returns r0. The program may read and write ctx. Runs of one
// program may happen concurrently.
func (p *Program) Run(ctx []byte) (uint64, error) {
	// run does what runSlow does, in assembly where there is a JIT, so
	// that Run inlines into its callers: a run of a JIT-compiled program
	// that needs no Env is then one call from Go, with three words of
	// arguments (every store counts).
	return run(p, unsafe.Pointer(unsafe.SliceData(ctx)), uintptr(len(ctx)))
}

// Func returns a func value that runs the program as Run does: the
// cheapest way to call it many times. For a JIT-compiled program that
// needs nothing from a run but its context and cannot fail but for its
// budget (a filter: no stack, helpers or packet), or checks its reads
// and stores nothing (see jit.Program.Direct), it calls the machine code
// with nothing in between, about half of Run's fixed cost; for any
// other program it is Run.
func (p *Program) Func() func(ctx []byte) (uint64, error) {
	if p.jit != nil {
		if f := p.jit.Direct(); f != nil {
			return f
		}
	}
	return p.Run
}

// runSlow is Run: the context check, then the engine.
func (p *Program) runSlow(ctx []byte) (uint64, error) {
	if len(ctx) < p.contextSize {
		return 0, p.shortContext(len(ctx))
	}
	if p.jit != nil {
		return p.jit.Run(ctx)
	}
	return p.vm.Run(ctx)
}

// RunPointer runs the program with the size bytes at ctx as its context,
// such as a pointer to a Go struct with a C-compatible layout. The caller
// keeps ctx alive during the call.
func (p *Program) RunPointer(ctx unsafe.Pointer, size uintptr) (uint64, error) {
	if p.contextSize > 0 && size < uintptr(p.contextSize) {
		return 0, p.shortContext(int(size))
	}
	if ctx == nil && size != 0 {
		return 0, fmt.Errorf("program %s: %w with a size of %d bytes", p.name, ErrNilContext, size)
	}
	if p.jit != nil {
		return p.jit.RunPointer(ctx, size)
	}
	return p.vm.RunPointer(ctx, size)
}

// RunContext is Run with a context: cancelling ctx or reaching its
// deadline ends the run with a *vm.RunError wrapping ctx.Err(). The run
// also keeps its time limit (Options.Timeout). A run is checked at least
// once per slice of its budget (about 100 µs of work); runs shorter than
// that only check ctx when they start.
func (p *Program) RunContext(ctx context.Context, mem []byte) (uint64, error) {
	if len(mem) < p.contextSize {
		return 0, p.shortContext(len(mem))
	}
	if p.jit != nil {
		return p.jit.RunContext(ctx, mem)
	}
	return p.vm.RunContext(ctx, mem)
}

// ErrShortContext reports a run of a verified program with a context
// smaller than the one it was verified for. It is jit.ErrShortContext,
// which programs compiled with jit.Options.Verified return.
var ErrShortContext = jit.ErrShortContext

// ErrNilContext reports RunPointer with a nil context and a size other
// than 0: the program would read and write at address 0.
var ErrNilContext = errors.New("nil context")

func (p *Program) shortContext(n int) error {
	return fmt.Errorf("program %s: %d-byte context: %w (%d bytes)", p.name, n, ErrShortContext, p.contextSize)
}
