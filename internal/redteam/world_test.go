package redteam

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// ringSize is the size of the world's ring buffer.
const ringSize = 4096

// world is the set of maps every hostile program sees, by index:
//
//	0 ring buffer (ringSize bytes)
//	1 array, 4-byte keys, 64-byte values, 4 entries
//	2 hash, 8-byte keys, 16-byte values, 16 entries
//	3 program array, 4 entries
//	4 queue of 8-byte values, 4 entries
//	5 per-CPU array, 4-byte keys, 8-byte values, 2 entries
type world struct {
	ring   maps.RingBufMap
	reader *maps.Reader
	array  maps.Map
	hash   maps.Map
	progs  maps.ProgArrayMap
	queue  maps.Map
	percpu maps.Map
	ms     []vm.Map
}

func newWorld() (*world, error) {
	var w world
	specs := []maps.Spec{
		{Name: "ring", Type: maps.RingBuf, MaxEntries: ringSize},
		{Name: "array", Type: maps.Array, KeySize: 4, ValueSize: 64, MaxEntries: 4},
		{Name: "hash", Type: maps.Hash, KeySize: 8, ValueSize: 16, MaxEntries: 16},
		{Name: "progs", Type: maps.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: 4},
		{Name: "queue", Type: maps.Queue, ValueSize: 8, MaxEntries: 4},
		{Name: "percpu", Type: maps.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 2},
	}
	for i := range specs {
		m, err := maps.New(&specs[i])
		if err != nil {
			return nil, err
		}
		w.ms = append(w.ms, m)
	}
	w.ring = w.ms[0].(maps.RingBufMap)
	w.array = w.ms[1].(maps.Map)
	w.hash = w.ms[2].(maps.Map)
	w.progs = w.ms[3].(maps.ProgArrayMap)
	w.queue = w.ms[4].(maps.Map)
	w.percpu = w.ms[5].(maps.Map)
	r, err := maps.NewReader(w.ring)
	if err != nil {
		return nil, err
	}
	w.reader = r
	return &w, nil
}

// drain reads every committed ring record and fails if one is larger than
// the ring. It returns the number of records.
func (w *world) drain() (int, error) {
	n := 0
	for {
		w.reader.SetDeadline(time.Now())
		rec, err := w.reader.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(rec.RawSample) > ringSize {
			return n, fmt.Errorf("ring sample of %d bytes in a %d-byte ring", len(rec.RawSample), ringSize)
		}
		n++
	}
}

func (w *world) close() {
	w.reader.Close()
	for _, m := range w.ms {
		if c, ok := m.(interface{ Close() error }); ok {
			c.Close()
		}
	}
}

// engines are the engines every case runs on.
var engines = []string{"interp", "jit"}

// runner runs a loaded program on one engine.
type runner struct {
	vp  *vm.Program
	jp  *jit.Program
	env *vm.Env
}

// newRunner prepares vp for engine. The JIT compiles checked code.
func newRunner(vp *vm.Program, engine string) (*runner, error) {
	r := &runner{vp: vp, env: vm.NewEnv()}
	if engine == "jit" {
		jp, err := jit.Compile(vp, nil)
		if err != nil {
			if errors.Is(err, vm.ErrUnsupported) {
				return nil, errJITUnsupported{err}
			}
			return nil, err
		}
		r.jp = jp
	}
	return r, nil
}

// run runs the program with ctx as its context on a fresh Env state.
func (r *runner) run(ctx []byte) (uint64, error) {
	r.env.Reset()
	r.env.SetContext(ctx)
	if r.jp != nil {
		return r.jp.Exec(r.env)
	}
	return r.vp.Exec(r.env)
}

func (r *runner) close() {
	if r.jp != nil {
		r.jp.Close()
	}
}

// hostileBudget is the instruction budget of hostile programs, so that
// loops end quickly.
const hostileBudget = 1 << 22

// load assembles src (see assemble) and loads it unverified, in checked
// mode, with the standard helpers and the world's maps.
func load(name, src string, w *world, budget uint64) (*vm.Program, error) {
	insns, err := assemble(src)
	if err != nil {
		return nil, err
	}
	if budget == 0 {
		budget = hostileBudget
	}
	return vm.Load(&vm.ProgramSpec{Name: name, Instructions: insns, Maps: w.ms},
		&vm.Options{Helpers: helpers.Standard(nil), Budget: budget})
}

var fnRef = regexp.MustCompile(`code_addr\(@(\w+)\)`)

// assemble is asm.Assemble with one addition: code_addr(@label) loads the
// address of the function at label (lddw BPF_PSEUDO_FUNC, whose imm is
// relative to the lddw's second slot).
func assemble(src string) ([]asm.Instruction, error) {
	labels := map[string]int{}
	type ref struct {
		slot  int
		label string
	}
	var refs []ref
	slot := 0
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if c := strings.IndexByte(l, '#'); c >= 0 {
			l = l[:c]
		}
		l = strings.TrimSpace(l)
		for {
			j := strings.IndexByte(l, ':')
			if j < 0 || strings.ContainsAny(l[:j], " \t[%,") {
				break
			}
			labels[l[:j]] = slot
			l = strings.TrimSpace(l[j+1:])
		}
		if l == "" {
			continue
		}
		if m := fnRef.FindStringSubmatch(l); m != nil {
			refs = append(refs, ref{slot, m[1]})
			lines[i] = fnRef.ReplaceAllString(lines[i], "code_addr(0)")
		}
		if strings.HasPrefix(l, "lddw") {
			slot += 2
		} else {
			slot++
		}
	}
	insns, err := asm.Assemble(strings.Join(lines, "\n"))
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		target, ok := labels[r.label]
		if !ok {
			return nil, fmt.Errorf("code_addr(@%s): no such label", r.label)
		}
		insns[r.slot].Imm = int32(target - r.slot - 1)
	}
	return insns, nil
}

// outcome is how a run ended.
type outcome struct {
	r0      uint64
	err     error // a run error
	loadErr error // the program did not load
}

func (o outcome) String() string {
	switch {
	case o.loadErr != nil:
		return "load error: " + o.loadErr.Error()
	case o.err != nil:
		return "run error: " + o.err.Error()
	}
	return fmt.Sprintf("r0 = %#x (%d)", o.r0, int64(o.r0))
}

// clean reports whether o is an acceptable end of a hostile run: a load
// error, a *vm.RunError, or a result.
func clean(o outcome) error {
	if o.err != nil {
		var re *vm.RunError
		if !errors.As(o.err, &re) {
			return fmt.Errorf("run error %v (%T) is not a *vm.RunError", o.err, o.err)
		}
	}
	return nil
}

// runErr wants a *vm.RunError wrapping one of targets.
func runErr(targets ...error) func(outcome) error {
	return func(o outcome) error {
		if err := clean(o); err != nil {
			return err
		}
		if o.err == nil || !errIs(o.err, targets...) {
			return fmt.Errorf("got %v, want a run error wrapping one of %v", o, targets)
		}
		return nil
	}
}

// runErrOrNeg wants a *vm.RunError or a negative errno in r0.
func runErrOrNeg(o outcome) error {
	if err := clean(o); err != nil {
		return err
	}
	if o.loadErr == nil && o.err == nil && int64(o.r0) >= 0 {
		return fmt.Errorf("got %v, want a run error or a negative errno", o)
	}
	return nil
}

// equals wants r0 == want.
func equals(want uint64) func(outcome) error {
	return func(o outcome) error {
		if o.err != nil || o.loadErr != nil || o.r0 != want {
			return fmt.Errorf("got %v, want r0 = %#x", o, want)
		}
		return nil
	}
}

// errJITUnsupported: the JIT refuses the program (an instruction it does
// not compile, such as callbacks); the case does not apply to it.
type errJITUnsupported struct{ err error }

func (e errJITUnsupported) Error() string { return "jit: unsupported: " + e.err.Error() }
