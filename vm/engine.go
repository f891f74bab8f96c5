package vm

import (
	"unsafe"

	"github.com/uebpf/uebpf/internal/engine"
)

// What engines other than the interpreter (package jit) need of a Program
// and an Env: package engine declares it (the contract, not API), this
// file provides it. The hot operations are pushed to engine's
// declarations with //go:linkname (a direct call); the compile-time ones
// are function values set here.

func init() {
	engine.Constant = func(p unsafe.Pointer, i int) uint64 { return (*Program)(p).code[i].imm }
	engine.ArrayMaps = func(p unsafe.Pointer) (uint64, []engine.ArrayMap) { return (*Program)(p).arrayMaps() }
	engine.HashMap = func(p unsafe.Pointer, i int) (unsafe.Pointer, int, int, bool) { return (*Program)(p).hashMap(i) }
	engine.StaticRegions = func(p unsafe.Pointer) int { return len((*Program)(p).regions) }
}

// beginRun is engine.BeginRun: what Exec does before it interprets.
//
//go:linkname beginRun github.com/uebpf/uebpf/internal/engine.BeginRun
func beginRun(e *Env, p *Program) (budget uint64, mark int) {
	e.prog = p
	if e.st.Status != 0 || e.tailCalls != 0 { // else nothing to clear
		e.clearStatus()
	}
	budget = e.st.Budget
	if budget == 0 {
		budget = p.budget
	}
	e.sliceStart = 0
	mark = len(e.st.Regions)
	if len(p.regions) != 0 {
		e.st.Regions = append(e.st.Regions, p.regions...)
	}
	return budget, mark
}

// endRun is engine.EndRun, and how Exec ends every run.
//
//go:linkname endRun github.com/uebpf/uebpf/internal/engine.EndRun
func endRun(e *Env, mark int) {
	if len(e.st.Regions) > mark {
		clear(e.st.Regions[mark:])
		e.st.Regions = e.st.Regions[:mark]
	}
	e.endRegions()
}

// callHash is engine.CallHash, which the interpreter also makes before a
// call of a HashLookup or HashUpdate helper: see lookupHash and
// updateHash.
//
//go:linkname callHash github.com/uebpf/uebpf/internal/engine.CallHash
func callHash(e *Env, update bool, r1, r2, r3, r4 uint64) (r0 uint64, ok bool) {
	if update {
		return e.updateHash(r1, r2, r3, r4)
	}
	return e.lookupHash(r1, r2)
}

// helperResult is engine.HelperResult.
//
//go:linkname helperResult github.com/uebpf/uebpf/internal/engine.HelperResult
func helperResult(e *Env, pc int) (next *Program, r0 uint64, err error) {
	if e.st.Status&(statusTailCall|statusOverdrawn) != statusTailCall {
		r0, err = e.finish(pc)
		return nil, r0, err
	}
	e.st.Status &^= statusTailCall
	e.prog = e.tailProg
	return e.prog, 0, nil
}

// sliceEndedEngine is engine.SliceEnded.
//
//go:linkname sliceEndedEngine github.com/uebpf/uebpf/internal/engine.SliceEnded
//go:noinline
func sliceEndedEngine(e *Env) error { return e.sliceEnded() }

// setProgram is engine.SetProgram.
//
//go:linkname setProgram github.com/uebpf/uebpf/internal/engine.SetProgram
func setProgram(e *Env, p *Program) { e.prog = p }

// arrayMaps is engine.ArrayMaps.
func (p *Program) arrayMaps() (tableBase uint64, arrays []engine.ArrayMap) {
	tableBase = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p.maps))))
	arrays = make([]engine.ArrayMap, len(p.arrays))
	for i, a := range p.arrays {
		arrays[i] = engine.ArrayMap{Base: a.base, Stride: a.stride, N: a.n}
	}
	return tableBase, arrays
}

// hashMap is engine.HashMap.
func (p *Program) hashMap(i int) (h unsafe.Pointer, keySize, valueSize int, writable bool) {
	if i < 0 || i >= len(p.hashes) || p.hashes[i].keySize == 0 {
		return nil, 0, 0, false
	}
	m := &p.hashes[i]
	return m.h, int(m.keySize), int(m.valueSize), m.writable
}

// The Env starts with the engines' part (engine.Env), whose offsets
// generated code uses, and its regions are laid out as engine.Region.
var (
	_ [0]struct{} = [unsafe.Offsetof(Env{}.st)]struct{}{}
	_ [0]struct{} = [unsafe.Sizeof(region{}) - engine.RegionSize]struct{}{}
	_ [0]struct{} = [engine.RegionSize - unsafe.Sizeof(region{})]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(region{}.lo) - engine.RegionLoOffset]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(region{}.hi) - engine.RegionHiOffset]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(region{}.writable) - engine.RegionWritableOffset]struct{}{}
	_ [0]struct{} = [engine.RegionWritableOffset - unsafe.Offsetof(region{}.writable)]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(region{}.keep) - unsafe.Offsetof(engine.Region{}.Keep)]struct{}{}
	_ [0]struct{} = [engine.StackSize - StackSize]struct{}{}
	_ [0]struct{} = [StackSize - engine.StackSize]struct{}{}
)
