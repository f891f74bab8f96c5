package redteam

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uebpf/uebpf/internal/engine"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// hcase is a hostile program and what its last run must end with.
type hcase struct {
	name string
	src  string
	// budget of a run (0: hostileBudget).
	budget uint64
	// runs of the program (0: 1), sharing one context; the ring is drained
	// between runs. Every run must end cleanly; want judges the last.
	runs int
	// setup runs once the program is loaded (program arrays ...).
	setup func(w *world, p *vm.Program) error
	// reader consumes the ring concurrently with the runs.
	reader bool
	want   func(outcome) error // nil: clean
	skip   string              // issue 16: a fix is in progress
}

func TestHostile(t *testing.T) {
	for _, c := range hostileCases() {
		for _, engine := range engines {
			t.Run(c.name+"/"+engine, func(t *testing.T) {
				if engine == "jit" && !jit.Supported {
					t.Skip("jit: no native backend on this platform")
				}
				knownFailing(t, c.skip)
				if !inChild() {
					t.Parallel()
				}
				isolated(t, func(t *testing.T) (string, error) { return runHostile(c, engine) })
			})
		}
	}
}

// runHostile runs c on engine in this process.
func runHostile(c hcase, engine string) (string, error) {
	w, err := newWorld()
	if err != nil {
		return "", err
	}
	defer w.close()
	want := c.want
	if want == nil {
		want = clean
	}
	p, err := load(c.name, c.src, w, c.budget)
	if err != nil {
		o := outcome{loadErr: err}
		return o.String(), want(o)
	}
	if c.setup != nil {
		if err := c.setup(w, p); err != nil {
			return "", fmt.Errorf("setup: %w", err)
		}
	}
	r, err := newRunner(p, engine)
	if u := (errJITUnsupported{}); errors.As(err, &u) {
		return "not applicable: " + err.Error(), nil
	}
	if err != nil {
		o := outcome{loadErr: err}
		return o.String(), want(o)
	}
	defer r.close()

	var readerErr error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if c.reader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				w.reader.SetDeadline(time.Now().Add(time.Millisecond))
				rec, err := w.reader.Read()
				if err == nil && len(rec.RawSample) > ringSize {
					readerErr = fmt.Errorf("concurrent reader: sample of %d bytes", len(rec.RawSample))
					return
				}
			}
		}()
	}

	ctx := hostileCtx()
	runs := max(c.runs, 1)
	var o outcome
	for i := range runs {
		r0, err := r.run(ctx)
		o = outcome{r0: r0, err: err}
		if i < runs-1 {
			if err := clean(o); err != nil {
				return "", fmt.Errorf("run %d: %w", i, err)
			}
			if !c.reader {
				if _, err := w.drain(); err != nil {
					return "", err
				}
			}
		}
	}
	close(stop)
	wg.Wait()
	if readerErr != nil {
		return "", readerErr
	}
	n, err := w.drain()
	if err != nil {
		return "", err
	}
	return o.String() + ", " + strconv.Itoa(n) + " ring records", want(o)
}

// args is shorthand for an argument list.
func args(a ...string) []string { return a }

// forgedMaps are map arguments no helper may take for a map of the run
// (or not for the map kind it needs).
var forgedMaps = []string{
	"0", "1", "r10-8", "ctx", "val", "rec", "mapv1",
	"map0+1", "map0+4", "map5+" + strconv.Itoa(int(engine.MapEntrySize)), "map0-" + strconv.Itoa(int(engine.MapEntrySize)),
	"map5+" + strconv.Itoa(int(100*engine.MapEntrySize)),
	"0xffffffffffffffff", "0xffff800000000000", "0x7ffffffff000", "0xc000000000",
	"map0", "map1", "map2", "map3", "map4", "map5", // the right one for some helpers, the wrong kind for the others
}

func forgedMapCalls(num int, rest ...string) [][]string {
	var l [][]string
	for _, m := range forgedMaps {
		l = append(l, append([]string{m}, rest...))
	}
	return l
}

func hostileCases() []hcase {
	cs := []hcase{
		// Issue 16, hole 1: submit/discard of a pointer into a record,
		// whose "header" the program wrote.
		{name: "ring-forged-submit", src: `
			lddw %r1, map_by_fd(0)
			mov %r2, 256
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			stw [%r7+16], 0xbffffff0
			mov %r1, %r7
			add %r1, 24
			mov %r2, 0
			call 132
			exit`},
		{name: "ring-forged-discard", src: `
			lddw %r1, map_by_fd(0)
			mov %r2, 256
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			stw [%r7+16], 0xbffffff0
			mov %r1, %r7
			add %r1, 24
			mov %r2, 0
			call 133
			exit`},
		// Submit of a record's own pointer twice, of its end, of another
		// ring's address, with a forged header at every 8 bytes.
		{name: "ring-forged-submit-sweep", src: `
			lddw %r1, map_by_fd(0)
			mov %r2, 1024
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			mov %r6, 0
		fill:	mov %r1, %r7
			add %r1, %r6
			stw [%r1], 0xbffffff0
			stw [%r1+4], 0x7fffffff
			add %r6, 8
			jlt %r6, 1024, fill
			mov %r6, 8
		sub:	mov %r1, %r7
			add %r1, %r6
			mov %r2, 0
			call 132
			mov %r1, %r7
			add %r1, %r6
			mov %r2, 2
			call 133
			add %r6, 8
			jlt %r6, 1024, sub
			mov %r1, %r7
			mov %r2, 0
			call 132
			mov %r1, %r7
			mov %r2, 0
			call 132
			mov %r0, 0
			exit`},
		// Hole 2: a submitted record must not stay writable.
		{name: "ring-write-after-submit", src: `
			lddw %r1, map_by_fd(0)
			mov %r2, 256
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			mov %r1, %r7
			mov %r2, 0
			call 132
			stw [%r7], 0x40000000
			mov %r0, 0
			exit`,
			want: runErr(vm.ErrMemoryAccess, vm.ErrReadOnly)},
		// Hole 2 as the brief states it: run 1 reserves and submits and
		// keeps the pointer in the context; Go consumes; run 2 reserves
		// the same space again and writes through the old pointer.
		{name: "ring-stale-pointer-next-run", runs: 3, src: `
			mov %r9, %r1
			lddw %r1, map_by_fd(0)
			mov %r2, 2040
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			mov %r0, 1
			exit
		ok:	mov %r6, %r0
			mov %r1, %r6
			mov %r2, 0
			call 132
			ldxdw %r7, [%r9+248]
			stxdw [%r9+248], %r6
			jeq %r7, 0, done
			stw [%r7-8], 0x40000000
			stw [%r7], 0x40000000
		done:	mov %r0, 0
			exit`,
			want: runErr(vm.ErrMemoryAccess, vm.ErrReadOnly)},
		// Hole 2 with a reader consuming while the run goes round the ring:
		// the program writes a 1 GiB length into every header that lands
		// inside its first, submitted record.
		{name: "ring-header-rewrite-wrap", reader: true, src: `
			lddw %r1, map_by_fd(0)
			mov %r2, 1024
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			mov %r1, %r7
			mov %r2, 2
			call 132
			mov %r6, 0
		again:	add %r6, 1
			jgt %r6, 100000, done
			lddw %r1, map_by_fd(0)
			mov %r2, 1016
			mov %r3, 0
			call 131
			jeq %r0, 0, again
			mov %r8, %r0
			sub %r0, %r7
			sub %r0, 8
			jgt %r0, 1016, submit
			mov %r1, %r7
			add %r1, %r0
			stw [%r1], 0x40000000
		submit:	mov %r1, %r8
			mov %r2, 2
			call 132
			ja again
		done:	mov %r0, 0
			exit`},

		// bpf_ringbuf_output writes a record in one step (maps'
		// RingBufMap.Write) from program memory: here from a record of
		// the same ring still reserved, whose bytes are forged headers,
		// over and over so that the records wrap round the ring while a
		// reader consumes them; then the reserved record is submitted.
		{name: "ring-output-from-own-record", reader: true, src: `
			lddw %r1, map_by_fd(0)
			mov %r2, 1024
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			mov %r6, 0
		fill:	mov %r1, %r7
			add %r1, %r6
			stw [%r1], 0xbffffff0
			stw [%r1+4], 0x7fffffff
			add %r6, 8
			jlt %r6, 1024, fill
			mov %r6, 0
		again:	add %r6, 1
			jgt %r6, 2000, done
			lddw %r1, map_by_fd(0)
			mov %r2, %r7
			mov %r3, 1024
			mov %r4, 0
			call 130
			lddw %r1, map_by_fd(0)
			mov %r2, %r7
			add %r2, 1016
			mov %r3, 16
			mov %r4, 0
			call 130
			ja again
		done:	mov %r1, %r7
			mov %r2, 0
			call 132
			mov %r0, 0
			exit`},
		// Records written while an older one stays reserved: the ring
		// must keep them behind it (pending_pos), refuse what would lap
		// it, and release them all once it is submitted.
		{name: "ring-output-behind-reserved", reader: true, src: `
			lddw %r1, map_by_fd(0)
			mov %r2, 64
			mov %r3, 0
			call 131
			jne %r0, 0, ok
			exit
		ok:	mov %r7, %r0
			mov %r6, 0
		again:	add %r6, 1
			jgt %r6, 200, done
			lddw %r1, map_by_fd(0)
			mov %r2, %r7
			mov %r3, 64
			mov %r4, 0
			call 130
			ja again
		done:	mov %r1, %r7
			mov %r2, 0
			call 132
			lddw %r1, map_by_fd(0)
			mov %r2, %r7
			mov %r3, 64
			mov %r4, 0
			call 130
			mov %r0, 0
			exit`},

		// Division edge cases: 0 divisors and INT_MIN / -1, every form.
		{name: "division-edges", src: `
			lddw %r1, 0x8000000000000000
			mov %r2, -1
			mov %r3, 0
			mov %r0, %r1
			sdiv %r0, %r2
			mov %r4, %r1
			smod %r4, %r2
			xor %r0, %r4
			mov %r4, %r1
			div %r4, %r3
			xor %r0, %r4
			mov %r4, %r1
			mod %r4, %r3
			xor %r0, %r4
			mov %r4, %r1
			sdiv %r4, %r3
			xor %r0, %r4
			mov %r4, %r1
			smod %r4, %r3
			xor %r0, %r4
			mov32 %r5, 0x80000000
			mov32 %r4, %r5
			sdiv32 %r4, -1
			xor %r0, %r4
			mov32 %r4, %r5
			smod32 %r4, -1
			xor %r0, %r4
			mov32 %r4, %r5
			div32 %r4, 0
			xor %r0, %r4
			mov32 %r4, %r5
			mod32 %r4, 0
			xor %r0, %r4
			mov %r4, %r1
			sdiv %r4, -1
			xor %r0, %r4
			mov %r4, %r1
			smod %r4, -1
			xor %r0, %r4
			exit`, want: divisionWant},

		// Deep recursion: past 8 frames, directly and through bpf_loop.
		{name: "recursion-direct", src: `
			call local f
			exit
		f:	call local f
			exit`, want: runErr(vm.ErrCallDepth)},
		{name: "recursion-through-loop", src: `
			call local f
			exit
		f:	mov %r1, 4
			lddw %r2, code_addr(@f)
			mov %r3, 0
			mov %r4, 0
			call 181
			exit`, want: runErr(vm.ErrCallDepth)},
		{name: "recursion-stack-use", src: `
			mov %r1, 0
			call local f
			exit
		f:	stdw [%r10-512], 1
			stdw [%r10-8], 1
			add %r1, 1
			call local f
			exit`, want: runErr(vm.ErrCallDepth)},

		// Stack pointer escapes: a stack address kept in the context and
		// in a map value, used by a later run.
		{name: "stack-escape-context", runs: 3, src: `
			ldxdw %r2, [%r1+248]
			mov %r3, %r10
			add %r3, -8
			stxdw [%r1+248], %r3
			jeq %r2, 0, out
			ldxdw %r0, [%r2]
			stdw [%r2], 0x12345678
			stdw [%r2-4096], 1
		out:	mov %r0, 0
			exit`, want: runErr(vm.ErrMemoryAccess)},
		{name: "stack-escape-map", runs: 3, src: prologue + `
			jeq %r8, 0, out
			ldxdw %r2, [%r8]
			mov %r3, %r10
			add %r3, -8
			stxdw [%r8], %r3
			jeq %r2, 0, out
			stdw [%r2], 0x12345678
			stdw [%r2+8], 0x12345678
			stdw [%r2+4096], 1
		out:	` + epilogue, want: runErr(vm.ErrMemoryAccess)},
		{name: "stack-outside-frame", src: `
			stdw [%r10], 1
			exit`, want: runErr(vm.ErrMemoryAccess)},
		{name: "stack-below", src: `
			mov %r1, %r10
			add %r1, -4104
			stdw [%r1], 1
			exit`, want: runErr(vm.ErrMemoryAccess)},
		{name: "stack-callee-writes-caller-above", src: `
			call local f
			exit
		f:	mov %r1, %r10
			add %r1, 600
			stdw [%r1], 1
			mov %r1, %r10
			add %r1, 5000
			stdw [%r1], 1
			exit`},

		// Legacy packet loads with offsets far outside the packet.
		{name: "ld-abs-huge", src: `
			mov %r6, %r1
			ldabsw 0x7fffffff
			ldabsw 0xfffffff0
			ldabsb -1
			exit`},
		{name: "ld-ind-huge", src: `
			mov %r6, %r1
			lddw %r2, 0x7ffffffffffffff0
			ldindw %r2, 0
			lddw %r2, 0xfffffffffffffff0
			ldindw %r2, 8
			mov %r2, -1
			ldindh %r2, 0x7fffffff
			exit`},

		// Atomics on unaligned, unmapped and foreign addresses.
		{name: "atomic-unaligned-stack", src: `
			mov %r2, 1
			lock add [%r10-7], %r2
			exit`, want: runErr(vm.ErrMisaligned, vm.ErrMemoryAccess)},
		{name: "atomic-unaligned-ctx", src: `
			mov %r2, 1
			lock xchg [%r1+3], %r2
			exit`, want: runErr(vm.ErrMisaligned, vm.ErrMemoryAccess)},
		{name: "atomic-unmapped", src: `
			mov %r0, 0
			mov %r2, 1
			lddw %r1, 0x1000
			lock cmpxchg [%r1], %r2
			exit`, want: runErr(vm.ErrMemoryAccess)},
		{name: "atomic-wild", src: `
			mov %r2, 1
			lddw %r1, 0xffff800000000000
			lock fetch add [%r1], %r2
			exit`, want: runErr(vm.ErrMemoryAccess)},
		{name: "atomic-map-table", src: `
			mov %r2, 1
			lddw %r1, map_by_fd(0)
			lock add [%r1], %r2
			exit`, want: runErr(vm.ErrMemoryAccess, vm.ErrReadOnly)},
		{name: "atomic-past-ctx", src: `
			mov %r2, 1
			lock add32 [%r1+256], %r2
			exit`, want: runErr(vm.ErrMemoryAccess)},
		{name: "atomic-straddle-ctx-end", src: `
			mov %r2, 1
			lock xor [%r1+252], %r2
			exit`, want: runErr(vm.ErrMemoryAccess, vm.ErrMisaligned)},
		{name: "write-map-table", src: `
			lddw %r1, map_by_fd(0)
			stdw [%r1], 0
			stdw [%r1+8], 0
			exit`, want: runErr(vm.ErrMemoryAccess, vm.ErrReadOnly)},

		// callx of garbage.
		{name: "callx-garbage", src: `
			lddw %r2, 0x123456789
			call %r2
			exit`, want: callxWant},
		{name: "callx-ctx", src: `
			call %r1
			exit`, want: callxWant},
		{name: "callx-minus-one", src: `
			mov %r2, -1
			call %r2
			exit`, want: callxWant},
		{name: "callx-past-end", src: `
			mov %r2, 80000
			call %r2
			exit`, want: callxWant},
		// callx takes a helper number: standard helpers called that way
		// with the arguments left in registers.
		{name: "callx-helper-numbers", src: `
			mov %r6, %r1
			mov %r2, 3
			call %r2
			mov %r1, %r6
			mov %r2, 132
			call %r2
			mov %r1, %r10
			mov %r3, 133
			call %r3
			mov %r1, %r6
			mov %r2, 0x7fffffff
			mov %r3, 12
			call %r3
			mov %r0, 0
			mov %r1, 0
			call %r1
			exit`, want: runErr(vm.ErrUnknownHelper, maps.ErrInvalid)}, // submit of the context fails the run now

		// Tail calls: bad indexes, wrong map kinds, loops.
		{name: "tail-call-bad-index", src: calls(12, [][]string{
			args("ctx", "map3", "4"), args("ctx", "map3", "0xffffffff"), args("ctx", "map3", "0x100000000"),
			args("ctx", "map3", "-1"), args("ctx", "map1", "0"), args("ctx", "map0", "0"), args("ctx", "val", "0"),
			args("ctx", "0", "0"), args("ctx", "r10-8", "0"), args("ctx", "map3+1", "0"),
		}, "")},
		{name: "tail-call-self-loop", src: `
			ldxdw %r2, [%r1+248]
			add %r2, 1
			stxdw [%r1+248], %r2
			lddw %r2, map_by_fd(3)
			mov %r3, 0
			call 12
			ldxdw %r0, [%r1+248]
			exit`,
			setup: func(w *world, p *vm.Program) error { return w.progs.SetProgram(0, p) },
			want:  tailCallLoopWant},
		{name: "tail-call-mutual-loop", src: `
			mov %r6, %r1
			lddw %r2, map_by_fd(3)
			mov %r3, 1
			call 12
			mov %r0, 7
			exit`,
			setup: func(w *world, p *vm.Program) error {
				other, err := load("other", `
					lddw %r2, map_by_fd(3)
					mov %r3, 0
					call 12
					mov %r0, 9
					exit`, w, 0)
				if err != nil {
					return err
				}
				if err := w.progs.SetProgram(1, other); err != nil {
					return err
				}
				return w.progs.SetProgram(0, p)
			}},
		{name: "tail-call-from-callback", src: `
			mov %r1, 100
			lddw %r2, code_addr(@cb)
			mov %r3, 0
			mov %r4, 0
			call 181
			exit
		cb:	lddw %r2, map_by_fd(3)
			mov %r3, 0
			call 12
			mov %r0, 0
			exit`,
			setup: func(w *world, p *vm.Program) error { return w.progs.SetProgram(0, p) }},
		{name: "tail-call-from-subprogram", src: `
			call local f
			exit
		f:	mov %r1, 0
			lddw %r2, map_by_fd(3)
			mov %r3, 0
			call 12
			mov %r0, 0
			exit`,
			setup: func(w *world, p *vm.Program) error { return w.progs.SetProgram(0, p) }},

		// bpf_loop with forged callbacks and huge counts.
		{name: "loop-forged-callbacks", src: calls(181, [][]string{
			args("1", "0", "0", "0"), args("1", "1", "0", "0"), args("1", "ctx", "0", "0"),
			args("1", "map0", "0", "0"), args("1", "0xffffffffffffffff", "0", "0"),
			args("1", "0x12345678", "0", "0"), args("1", "r10-8", "0", "0"), args("1", "val", "0", "0"),
			args("1", "fn", "0", "1"), args("1", "fn+1", "0", "0"), args("1", "fn+8", "0", "0"),
			args("1", "fn-8", "0", "0"), args("1", "fn+800000", "0", "0"),
		}, "mov %r0, 1\nexit")},
		{name: "loop-huge-counts", src: calls(181, [][]string{
			args("0xffffffffffffffff", "fn", "0", "0"), args("0x800001", "fn", "0", "0"),
			args("0x7fffffff", "fn", "0", "0"), args("0x100000000", "fn", "0", "0"),
		}, "mov %r0, 1\nexit")},
		{name: "loop-ctx-wild", src: calls(181, [][]string{
			args("4", "fn", "0xffff800000000000", "0"), args("4", "fn", "r10+4096", "0"),
		}, "ldxdw %r0, [%r2]\nexit"), want: runErr(vm.ErrMemoryAccess)},
		{name: "loop-budget", src: calls(181, [][]string{
			args("0x800000", "fn", "0", "0"),
		}, "mov %r1, 0x800000\nlddw %r2, code_addr(@cb2)\nmov %r3, 0\nmov %r4, 0\ncall 181\nmov %r0, 0\nexit\ncb2: mov %r0, 0\nexit"),
			want: runErr(vm.ErrBudgetExceeded)},
		{name: "ja-minus-one", src: "ja -1\nexit", want: runErr(vm.ErrBudgetExceeded)},
	}

	// Forged map pointers to every map helper.
	for _, h := range []struct {
		num  int
		rest []string
	}{
		{1, args("r10-8")},
		{2, args("r10-8", "r10-40", "0")},
		{3, args("r10-8")},
		{87, args("r10-40", "0")},
		{88, args("r10-40")},
		{89, args("r10-40")},
		{195, args("r10-8", "0")},
		{130, args("r10-40", "8", "0")},
		{131, args("8", "0")},
		{134, args("0")},
		{134, args("1")},
	} {
		cs = append(cs, hcase{name: "forged-map-" + strconv.Itoa(h.num) + "-" + strings.Join(h.rest, "-"),
			src: calls(h.num, forgedMapCalls(h.num, h.rest...), "")})
	}
	// A reserve through a forged map must not hand out a record: submit
	// whatever came back.
	{
		var l [][]string
		for _, m := range forgedMaps {
			l = append(l, args(m, "8", "0"))
		}
		src := prologue
		for _, a := range l {
			src += operand(1, a[0]) + "mov %r2, 8\nmov %r3, 0\ncall 131\njeq %r0, 0, +3\nmov %r1, %r0\nmov %r2, 0\ncall 132\n"
		}
		cs = append(cs, hcase{name: "forged-map-reserve-submit", src: src + epilogue})
	}
	// tail_call's map argument is r2.
	{
		var l [][]string
		for _, m := range forgedMaps {
			l = append(l, args("ctx", m, "0"))
		}
		cs = append(cs, hcase{name: "forged-map-12", src: calls(12, l, "")})
	}

	// Wild pointers and huge lengths to memory helpers.
	var probe, probeStr [][]string
	for _, p := range wildPointers {
		probe = append(probe, args("r10-64", "64", p), args(p, "8", "ctx"))
		probeStr = append(probeStr, args("r10-64", "64", p), args(p, "8", "ctx"))
	}
	for _, size := range []string{"0xffffffff", "0x100000000", "0x7fffffffffffffff", "0xffffffffffffffff", "4097", "513", "65"} {
		probe = append(probe, args("r10-64", size, "ctx"), args("ctx", size, "r10-64"), args("val", size, "ctx"), args("rec", size, "ctx"))
		probeStr = append(probeStr, args("r10-64", size, "ctx"), args("ctx", size, "r10-64"), args("val", size, "ctx"), args("rec", size, "ctx"))
	}
	for _, dst := range []string{"r10", "r10-4", "r10+8", "map0", "mapv1", "mapv1+256", "val+60", "rec+60", "ctx+250"} {
		probe = append(probe, args(dst, "8", "ctx"))
		probeStr = append(probeStr, args(dst, "8", "ctx"))
	}
	cs = append(cs,
		hcase{name: "probe-read-user-wild", src: calls(112, probe, "")},
		hcase{name: "probe-read-str-wild", src: calls(114, probeStr, "")},
		hcase{name: "probe-read-4-wild", src: calls(4, probe, "")},
		hcase{name: "probe-read-45-wild", src: calls(45, probeStr, "")},
	)

	// snprintf(str, size, fmt, data, data_len).
	var snp [][]string
	for _, f := range []string{"ctx", "ctx+32", "ctx+64", "ctx+96"} {
		for _, data := range []string{"ctx+128", "ctx+136", "ctx+144"} {
			snp = append(snp, args("r10-128", "128", f, data, "32"), args("r10-128", "128", f, data, "96"))
		}
	}
	for _, p := range wildPointers {
		snp = append(snp, args("r10-128", "128", p, "ctx+128", "32"), args("r10-128", "128", "ctx", p, "32"),
			args(p, "128", "ctx", "ctx+128", "32"))
	}
	for _, n := range []string{"0xffffffff", "0x100000000", "0xffffffffffffffff", "512", "4096", "97", "7"} {
		snp = append(snp, args("r10-128", n, "ctx", "ctx+128", "32"), args("r10-128", "128", "ctx", "ctx+128", n),
			args("ctx+128", n, "ctx+96", "ctx+128", "8"))
	}
	snp = append(snp, args("r10-128", "128", "ctx", "ctx+248", "16"), args("r10-128", "128", "mapv1+250", "ctx+128", "8"),
		args("r10-128", "0", "ctx", "ctx+128", "32"), args("0", "0", "ctx", "ctx+128", "32"))
	cs = append(cs, hcase{name: "snprintf-wild", src: calls(165, snp, "")})

	// trace_printk(fmt, fmt_size, a1, a2, a3) and trace_vprintk(fmt, size, data, data_len).
	var tp, tvp [][]string
	for _, f := range []string{"ctx", "ctx+32", "ctx+64", "ctx+96"} {
		for _, size := range []string{"16", "32", "64", "96", "0xffffffff", "0xffffffffffffffff", "0"} {
			tp = append(tp, args(f, size, "0xffff800000000000", "1", "0x1000"), args(f, size, "ctx", "r10-8", "0"))
			tvp = append(tvp, args(f, size, "ctx+128", "96"), args(f, size, "ctx+128", "0xffffffff"))
		}
	}
	for _, p := range wildPointers {
		tp = append(tp, args(p, "16", "ctx", "0", "0"), args("ctx", "16", p, p, p))
		tvp = append(tvp, args(p, "16", "ctx+128", "32"), args("ctx", "16", p, "32"))
	}
	cs = append(cs, hcase{name: "trace-printk-wild", src: calls(6, tp, "")},
		hcase{name: "trace-vprintk-wild", src: calls(177, tvp, "")})

	// strncmp(s1, s1_sz, s2).
	var sc [][]string
	for _, p := range wildPointers {
		sc = append(sc, args(p, "8", "ctx"), args("ctx", "8", p), args("ctx", "0xffffffff", p))
	}
	for _, n := range []string{"0xffffffff", "0xffffffffffffffff", "257", "256", "0"} {
		sc = append(sc, args("ctx+64", n, "ctx+64"), args("r10-8", n, "ctx+64"), args("ctx+64", n, "mapv1+63"))
	}
	cs = append(cs, hcase{name: "strncmp-wild", src: calls(182, sc, "")})

	// get_current_comm(buf, size).
	var comm [][]string
	for _, p := range wildPointers {
		comm = append(comm, args(p, "16"))
	}
	for _, n := range []string{"0xffffffff", "0xffffffffffffffff", "4097", "513", "0", "1"} {
		comm = append(comm, args("r10-16", n), args("ctx+240", n), args("val+56", n), args("rec+56", n))
	}
	comm = append(comm, args("map0", "16"), args("r10", "16"))
	cs = append(cs, hcase{name: "get-current-comm-wild", src: calls(16, comm, "")})

	// perf_event_output is not provided: the program must fail to load.
	cs = append(cs, hcase{name: "perf-event-output", src: calls(25, [][]string{args("ctx", "map0", "0", "r10-8", "8")}, ""),
		want: func(o outcome) error {
			if o.loadErr == nil || !errors.Is(o.loadErr, vm.ErrHelperMissing) {
				return fmt.Errorf("got %v, want a load error (helper missing)", o)
			}
			return nil
		}})

	// ringbuf_output with sizes beyond the ring and wild data.
	var ro [][]string
	for _, n := range []string{"4089", "4096", "4097", "0x10000000", "0xffffffff", "0x100000000", "0xffffffffffffffff", "0x7ffffff8"} {
		ro = append(ro, args("map0", "ctx", n, "0"), args("map0", "r10-64", n, "0"))
	}
	for _, p := range wildPointers {
		ro = append(ro, args("map0", p, "8", "0"))
	}
	ro = append(ro, args("map0", "ctx", "8", "0xffffffffffffffff"), args("map0", "ctx", "8", "3"))
	cs = append(cs, hcase{name: "ringbuf-output-huge", src: calls(130, ro, "")},
		hcase{name: "ringbuf-reserve-huge", src: calls(131, [][]string{
			args("map0", "4089"), args("map0", "4096"), args("map0", "0xffffffff"), args("map0", "0xffffffffffffffff"),
			args("map0", "0x100000000"), args("map0", "0x7ffffff8"),
		}, "")})

	if long() {
		// The run's default time limit (a second) may end it before
		// the budget does.
		cs = append(cs, hcase{name: "loop-nested-default-budget", budget: vm.DefaultBudget, src: calls(181, [][]string{
			args("0x800000", "fn", "0", "0"),
		}, "mov %r1, 0x800000\nlddw %r2, code_addr(@cb2)\nmov %r3, 0\nmov %r4, 0\ncall 181\nmov %r0, 0\nexit\ncb2: mov %r0, 0\nexit"),
			want: runErr(vm.ErrBudgetExceeded, vm.ErrTimeout)})
	}
	return cs
}

// divisionWant: the ISA's results, r0 computed by hand (see division-edges).
func divisionWant(o outcome) error {
	if err := clean(o); err != nil {
		return err
	}
	if o.err != nil || o.loadErr != nil {
		return fmt.Errorf("got %v, want a result", o)
	}
	const intMin = uint64(1) << 63
	r0 := intMin     // sdiv INT_MIN / -1 = INT_MIN
	r0 ^= 0          // smod INT_MIN % -1 = 0
	r0 ^= 0          // div by 0 = 0
	r0 ^= intMin     // mod by 0 = dividend
	r0 ^= 0          // sdiv by 0 = 0
	r0 ^= intMin     // smod by 0 = dividend
	r0 ^= 0x80000000 // sdiv32 INT_MIN/-1 = INT_MIN (32-bit, zero-extended)
	r0 ^= 0          // smod32 INT_MIN % -1 = 0
	r0 ^= 0          // div32 by 0
	r0 ^= 0x80000000 // mod32 by 0 = dividend
	r0 ^= intMin     // sdiv imm -1
	r0 ^= 0          // smod imm -1
	if o.r0 != r0 {
		return fmt.Errorf("got %v, want r0 = %#x", o, r0)
	}
	return nil
}

// callxWant: a callx to something that is not a function of the program
// ends the run with a *vm.RunError (or recursion with ErrCallDepth).
func callxWant(o outcome) error {
	if err := clean(o); err != nil {
		return err
	}
	if o.loadErr == nil && o.err == nil {
		return fmt.Errorf("got %v, want a run error", o)
	}
	return nil
}

// tailCallLoopWant: a program that tail-calls itself runs 1 + 33 times.
func tailCallLoopWant(o outcome) error {
	if err := clean(o); err != nil {
		return err
	}
	if o.err != nil || o.r0 != 1+vm.MaxTailCalls {
		return fmt.Errorf("got %v, want r0 = %d", o, 1+vm.MaxTailCalls)
	}
	return nil
}

var _ = os.Getenv
