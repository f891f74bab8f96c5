package tracepoint

import (
	"errors"
	"fmt"

	"github.com/uebpf/uebpf"
	"github.com/uebpf/uebpf/asm"
	"github.com/uebpf/uebpf/jit"
	"github.com/uebpf/uebpf/verifier"
	"github.com/uebpf/uebpf/vm"
)

// Option configures an attachment.
type Option func(*config)

// source prepares the program of an attachment for tracepoint p: sets
// a.run, a.keep, a.desc and adds to a.needs.
type source func(p *Point, a *Attachment, cfg *config) error

type config struct {
	sources     []source
	needs       needs
	interpreted bool
}

// Program attaches a program loaded with package uebpf, such as one
// compiled from C with the header Header writes. A verified program must
// have been verified for a context no larger than the tracepoint's record
// (Info.RecordSize); an unverified one runs in checked mode. The caller
// keeps the program's collection open while the attachment exists.
func Program(prog *uebpf.Program) Option {
	return func(c *config) {
		c.sources = append(c.sources, func(p *Point, a *Attachment, _ *config) error {
			if prog == nil {
				return errors.New("nil *uebpf.Program")
			}
			if n := prog.ContextSize(); n > p.recordSize {
				return fmt.Errorf("program %s was verified for a %d-byte context, more than the %d-byte record of %s (check the header it was built with): %w",
					prog.Name(), n, p.recordSize, p.Name(), ErrContextSize)
			}
			a.run, a.keep = prog.RunPointer, prog
			a.desc = fmt.Sprintf("program %s (%v)", prog.Name(), prog.Engine())
			a.needs |= needStatic
			return nil
		})
	}
}

// VMProgram attaches a vm program. It is verified for the tracepoint's
// record (as its context) and compiled by the JIT where there is one, like
// a filter.
func VMProgram(prog *vm.Program) Option {
	return func(c *config) {
		c.sources = append(c.sources, func(p *Point, a *Attachment, cfg *config) error {
			if prog == nil {
				return errors.New("nil *vm.Program")
			}
			if err := prepare(p, a, prog, cfg.interpreted, false); err != nil {
				return fmt.Errorf("program %s: %w", prog.Name(), err)
			}
			a.desc = "program " + prog.Name() + " " + a.desc
			a.needs |= needStatic
			return nil
		})
	}
}

// WithTimestamp fills $ctx.timestamp before a program runs, for a program
// that reads it (recorded events always carry it). Reading the clock can
// cost more than running a filter, so it is filled only on request; filters
// ask for it by naming $ctx.timestamp.
func WithTimestamp() Option { return func(c *config) { c.needs |= needTimestamp } }

// WithThreadID fills $ctx.vtid (a system call per firing) for a program
// that reads it. Filters ask for it by naming $ctx.vtid.
func WithThreadID() Option { return func(c *config) { c.needs |= needTid } }

// WithGoroutineID fills $ctx.goid (a few ns per firing on amd64 and
// arm64, microseconds elsewhere) for a program that reads it.
func WithGoroutineID() Option { return func(c *config) { c.needs |= needGoid } }

// Interpreted runs a filter or vm program in the interpreter even where
// the JIT could compile it, to compare engines.
func Interpreted() Option { return func(c *config) { c.interpreted = true } }

// ErrContextSize reports a program verified for a larger context than the
// tracepoint's record.
var ErrContextSize = errors.New("program context larger than the tracepoint record")

// prepare verifies prog for p's record and picks its engine: the JIT
// without run-time checks where there is one, else the interpreter. With
// payloadOnly, prog is verified for the payload alone, read-only, and
// runs on the caller's payload when the JIT compiles it to code that runs
// without an Env (Attachment.direct).
func prepare(p *Point, a *Attachment, prog *vm.Program, interpreted, payloadOnly bool) error {
	vo := verifier.Options{ContextSize: p.recordSize}
	if payloadOnly {
		vo = verifier.Options{ContextSize: p.info.Size, ContextReadOnly: true}
	}
	if _, err := verifier.Verify(prog, &vo); err != nil {
		return fmt.Errorf("verifying for the %d-byte record of %s: %w", p.recordSize, p.Name(), err)
	}
	if jit.Supported && !interpreted {
		jp, err := jit.Compile(prog, &jit.Options{Unchecked: true})
		if err == nil {
			a.run, a.keep, a.desc = jp.RunPointer, jp, "(jit)"
			if payloadOnly && jp.Lean() && straight(prog.Instructions()) {
				a.direct, a.jit, a.jitFunc = true, jp, jp.Direct()
				if a.jitFunc == nil { // no direct entry on this architecture
					a.jitFunc = jp.Run
				}
			}
			return nil
		}
	}
	a.run, a.keep, a.desc = prog.RunPointer, prog, "(interpreter)"
	return nil
}

// straight reports whether insns call nothing and never jump backwards:
// code that the JIT runs to its end on its own frame, never handing its
// context to Go code (which could move a goroutine's stack under it).
func straight(insns []asm.Instruction) bool {
	for _, ins := range insns {
		if c := ins.Class(); c != asm.ClassJMP && c != asm.ClassJMP32 {
			continue
		}
		switch op := ins.Opcode & 0xf0; {
		case op == asm.JmpCALL:
			return false
		case op == asm.JmpEXIT:
		case op == asm.JmpJA && ins.Class() == asm.ClassJMP32: // gotol
			if ins.Imm < 0 {
				return false
			}
		case ins.Offset < 0:
			return false
		}
	}
	return true
}
