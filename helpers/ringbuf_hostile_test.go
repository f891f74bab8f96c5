package helpers_test

import (
	"errors"
	"os"
	osexec "os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/uebpf/uebpf/helpers"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/maps"
	"github.com/uebpf/uebpf/vm"
)

// Hostile ring buffer programs (issue 16): an unverified program must not
// crash the host or hand the reader memory outside the ring through
// bpf_ringbuf_submit/discard. Each case runs in a child process, so that
// a crash fails the test instead of ending the test binary.

// childCaseEnv names the case a child process runs.
const childCaseEnv = "UEBPF_CHILD_CASE"

// inChild runs fn in a child process (this test binary, running only the
// current test) and fails t unless the child exits 0 and prints "ok". In
// the child, it runs fn, prints "ok" and exits.
func inChild(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	switch c := os.Getenv(childCaseEnv); {
	case c == "":
	case c != name: // a child runs its own case only
		t.SkipNow()
	default:
		fn(t)
		if t.Failed() {
			return // the test binary reports the failure and exits 1
		}
		runtime.GC() // a corrupted heap shows here
		runtime.GC()
		os.Stdout.WriteString("ok\n")
		os.Exit(0)
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	cmd := osexec.Command(os.Args[0], "-test.run=^"+top+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childCaseEnv+"="+name)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
}

// ringEngine runs a program on the interpreter or the JIT.
type ringEngine struct {
	name string
	run  func(t *testing.T, p *vm.Program, env *vm.Env) (uint64, error)
}

func ringEngines() []ringEngine {
	es := []ringEngine{{"interpreter", func(_ *testing.T, p *vm.Program, env *vm.Env) (uint64, error) { return p.Exec(env) }}}
	if jit.Supported {
		es = append(es, ringEngine{"jit", func(t *testing.T, p *vm.Program, env *vm.Env) (uint64, error) {
			jp, err := jit.Compile(p, &jit.Options{})
			if err != nil {
				t.Fatalf("jit: %v", err)
			}
			defer jp.Close()
			return jp.Exec(env)
		}})
	}
	return es
}

// newRings returns n ring buffers of 4096 bytes and their readers.
func newRings(t *testing.T, n int) ([]vm.Map, []*maps.Reader) {
	t.Helper()
	var ms []vm.Map
	var rds []*maps.Reader
	for range n {
		rb, rd := ringBuf(t, 4096)
		ms = append(ms, rb)
		rds = append(rds, rd)
	}
	return ms, rds
}

// drain reads what rd holds now and fails t on a read error or a sample
// larger than max bytes: a reader must never get memory beyond a record.
func drain(t *testing.T, rd *maps.Reader, max int) []string {
	t.Helper()
	var got []string
	rd.SetDeadline(time.Now())
	for {
		rec, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(rec.RawSample) > max {
			t.Fatalf("read a sample of %d bytes, want at most %d", len(rec.RawSample), max)
		}
		got = append(got, string(rec.RawSample))
	}
}

// Program prologue: r7 = a 256-byte record of ring 0, or exit with r0 = 1.
const reserve256 = `
	lddw %r1, map_by_fd(0)
	mov %r2, 256
	mov %r3, 0
	call 131
	jne %r0, 0, ok
	mov %r0, 1
	exit
ok:
	mov %r7, %r0
`

func TestRingbufHostile(t *testing.T) {
	tests := []struct {
		name string
		src  string
		// wantErr: the run must fail with a *vm.RunError wrapping it;
		// nil: the run must succeed.
		wantErr error
		// want: the records ring 0's reader must get afterwards.
		want []string
	}{
		{
			// Issue 16 item 1: a fake header (busy bit and a ~1 GiB
			// length) inside a record, then submit of the pointer after
			// it, which reserve never returned.
			name: "fake header",
			src: reserve256 + `
	stw [%r7+16], 0xbffffff0
	mov %r1, %r7
	add %r1, 24
	mov %r2, 0
	call 132
	exit`,
			wantErr: maps.ErrInvalid,
		},
		{
			// Issue 16 item 2: the record stays writable after submit.
			name: "write after submit",
			src: reserve256 + `
	stdw [%r7+0], 7
	mov %r1, %r7
	mov %r2, 0
	call 132
	stw [%r7-8], 0x3ffffff0
	exit`,
			wantErr: vm.ErrMemoryAccess,
			want:    []string{"\x07" + strings.Repeat("\x00", 255)},
		},
		{
			// The same region as the last write: engines that cache
			// the region of their last check must forget it.
			name: "rewrite after submit",
			src: reserve256 + `
	stdw [%r7+0], 7
	mov %r1, %r7
	mov %r2, 0
	call 132
	stdw [%r7+0], 8
	exit`,
			wantErr: vm.ErrMemoryAccess,
			want:    []string{"\x07" + strings.Repeat("\x00", 255)},
		},
		{
			name: "write after discard",
			src: reserve256 + `
	stdw [%r7+0], 7
	mov %r1, %r7
	mov %r2, 0
	call 133
	stdw [%r7+0], 7
	exit`,
			wantErr: vm.ErrMemoryAccess,
		},
		{
			name: "read after submit",
			src: reserve256 + `
	mov %r1, %r7
	mov %r2, 0
	call 132
	ldxdw %r0, [%r7+0]
	exit`,
			wantErr: vm.ErrMemoryAccess,
			want:    []string{strings.Repeat("\x00", 256)},
		},
		{
			name: "double submit",
			src: reserve256 + `
	stb [%r7+0], 0x61
	mov %r1, %r7
	mov %r2, 0
	call 132
	mov %r1, %r7
	mov %r2, 0
	call 132
	exit`,
			wantErr: maps.ErrInvalid,
			want:    []string{"a" + strings.Repeat("\x00", 255)},
		},
		{
			name: "discard then submit",
			src: reserve256 + `
	mov %r1, %r7
	mov %r2, 0
	call 133
	mov %r1, %r7
	mov %r2, 0
	call 132
	exit`,
			wantErr: maps.ErrInvalid,
		},
		{
			name: "submit pointer+8",
			src: reserve256 + `
	mov %r1, %r7
	add %r1, 8
	mov %r2, 0
	call 132
	exit`,
			wantErr: maps.ErrInvalid,
		},
		{
			name: "submit pointer-8",
			src: reserve256 + `
	mov %r1, %r7
	add %r1, -8
	mov %r2, 0
	call 132
	exit`,
			wantErr: maps.ErrInvalid,
		},
		{
			// Records of two rings, committed crosswise: each ring
			// finds its own record; a pointer inside ring 1's record
			// is not one.
			name: "two rings",
			src: reserve256 + `
	stb [%r7+0], 0x61
	lddw %r1, map_by_fd(1)
	mov %r2, 8
	mov %r3, 0
	call 131
	jeq %r0, 0, fail
	mov %r8, %r0
	mov %r1, %r8
	add %r1, 16
	mov %r2, 0
	call 132
	exit
fail:
	mov %r0, 2
	exit`,
			wantErr: maps.ErrInvalid,
		},
		{
			name: "two rings committed crosswise",
			src: reserve256 + `
	stb [%r7+0], 0x61
	lddw %r1, map_by_fd(1)
	mov %r2, 1
	mov %r3, 0
	call 131
	jeq %r0, 0, fail
	mov %r8, %r0
	stb [%r8+0], 0x62
	mov %r1, %r8
	mov %r2, 0
	call 132
	mov %r1, %r7
	mov %r2, 0
	call 132
	mov %r0, 0
	exit
fail:
	mov %r0, 2
	exit`,
			want: []string{"a" + strings.Repeat("\x00", 255)},
		},
	}
	for _, e := range ringEngines() {
		for _, tc := range tests {
			name := e.name + "/" + tc.name
			t.Run(name, func(t *testing.T) {
				inChild(t, name, func(t *testing.T) {
					ms, rds := newRings(t, 2)
					p := load(t, tc.src, helpers.Standard(nil), ms...)
					env := vm.NewEnv()
					r0, err := e.run(t, p, env)
					if tc.wantErr == nil {
						if err != nil || r0 != 0 {
							t.Fatalf("run: r0 = %d, %v", r0, err)
						}
					} else {
						var re *vm.RunError
						if !errors.As(err, &re) || !errors.Is(err, tc.wantErr) {
							t.Fatalf("run: r0 = %#x, %v; want a *vm.RunError wrapping %v", r0, err, tc.wantErr)
						}
					}
					if got := drain(t, rds[0], 256); strings.Join(got, "|") != strings.Join(tc.want, "|") {
						t.Errorf("ring 0: read %q, want %q", got, tc.want)
					}
					drain(t, rds[1], 8)
				})
			})
		}
	}
}

// A record a run reserved and never committed, because the run failed
// after reserving or because an unverified program forgot it, is
// discarded when the run ends: the records after it reach the reader.
func TestRingbufAbandonedRecord(t *testing.T) {
	tests := []struct {
		name, src string
		wantErr   error
		want      []string // what the reader gets, then the record written after the run
	}{
		{"exit without commit", reserve256 + `
	stb [%r7+0], 0x61
	mov %r0, 0
	exit`, nil, nil},
		{"fault after reserve", reserve256 + `
	stb [%r7+0], 0x61
	mov %r1, 0
	ldxdw %r0, [%r1+0]
	exit`, vm.ErrMemoryAccess, nil},
		{"budget after reserve", reserve256 + `
loop:
	ja loop`, vm.ErrBudgetExceeded, nil},
		// A record the run committed is the reader's: the run's end
		// leaves it alone, and its second reservation goes.
		{"fault after submit and a second reserve", reserve256 + `
	stb [%r7+0], 0x61
	mov %r1, %r7
	mov %r2, 0
	call 132
	lddw %r1, map_by_fd(0)
	mov %r2, 8
	mov %r3, 0
	call 131
	stw [%r7+0], 1
	exit`, vm.ErrMemoryAccess, []string{"a" + strings.Repeat("\x00", 255)}},
	}
	for _, e := range ringEngines() {
		for _, tc := range tests {
			name := e.name + "/" + tc.name
			t.Run(name, func(t *testing.T) {
				inChild(t, name, func(t *testing.T) {
					ms, rds := newRings(t, 1)
					p := load(t, tc.src, helpers.Standard(nil), ms...)
					env := vm.NewEnv()
					env.SetBudget(10000)
					if _, err := e.run(t, p, env); !errors.Is(err, tc.wantErr) && (err != nil || tc.wantErr != nil) {
						t.Fatalf("run: %v, want %v", err, tc.wantErr)
					}
					if err := ms[0].(maps.RingBufMap).Output([]byte("next"), 0); err != nil {
						t.Fatal(err)
					}
					want := append(tc.want, "next")
					if got := drain(t, rds[0], 256); strings.Join(got, "|") != strings.Join(want, "|") {
						t.Errorf("read %q after the run, want %q", got, want)
					}
				})
			})
		}
	}
}
