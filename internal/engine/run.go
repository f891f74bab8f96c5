package engine

import "unsafe"

// Operations on a run (env is a *vm.Env, prog a *vm.Program) that an
// engine other than the interpreter makes once per run or per helper
// call. Package vm provides them (//go:linkname; see doc.go).

// BeginRun prepares env for a run of prog, as vm's Exec does for the
// interpreter: prog becomes the running program, the helper status is
// cleared and prog's static regions join the run's. It returns the run's
// budget and a mark to pass to EndRun.
func BeginRun(env, prog unsafe.Pointer) (budget uint64, mark int)

// EndRun undoes what BeginRun added to env's regions and discards the
// records the run still holds (vm.Env.Hold).
func EndRun(env unsafe.Pointer, mark int)

// CallHash answers a call of a HashLookup helper (update false: r1 = map
// pointer, r2 = key address) or of a HashUpdate helper (update true:
// r1..r4 = map pointer, key, value, flags) as the helper would, with a
// direct call of the map, and returns r0. ok is false, and nothing is
// done, when the helper must run instead.
func CallHash(env unsafe.Pointer, update bool, r1, r2, r3, r4 uint64) (r0 uint64, ok bool)

// HelperResult tells an engine what to do after a helper called at slot
// pc set a status (Env.Status != 0): continue in next (a *vm.Program, the
// target of a tail call, already the running program), or end the run
// with r0 and err.
func HelperResult(env unsafe.Pointer, pc int) (next unsafe.Pointer, r0 uint64, err error)

// SliceEnded is what an engine calls each time a run has used a slice of
// its budget: it returns the cause that ends the run (its context's error
// or vm.ErrTimeout), if any. It is a call into Go that is not inlined, so
// the goroutine stops there when the scheduler or the garbage collector
// asked it to: an engine whose code Go cannot preempt comes back at least
// once per slice.
func SliceEnded(env unsafe.Pointer) error

// SetProgram makes prog the running program of env, for an engine that
// returns from a bpf-to-bpf call into a caller after the callee made a
// tail call.
func SetProgram(env, prog unsafe.Pointer)

// What engines ask of a program when they compile it, which package vm
// sets when it initialises (prog is a *vm.Program).
var (
	// Constant returns the value that the lddw at slot i loads, map
	// references resolved.
	Constant func(prog unsafe.Pointer, i int) uint64
	// ArrayMaps returns the address of the program's map table (a map
	// pointer is the address of one of its entries, MapEntrySize bytes
	// each) and, by entry, what an inline lookup needs of an array. The
	// memory of these arrays is a static region of the program.
	ArrayMaps func(prog unsafe.Pointer) (table uint64, arrays []ArrayMap)
	// HashMap returns what an engine needs to answer lookups and updates
	// of entry i of the map table itself: the map's handle (HashLookup,
	// HashUpdate, HashLayoutOf), its key and value sizes, and whether
	// programs may write it. h is nil for a map that is not a hash map of
	// package maps.
	HashMap func(prog unsafe.Pointer, i int) (h unsafe.Pointer, keySize, valueSize int, writable bool)
	// StaticRegions returns how many regions BeginRun adds to a run of the
	// program (its global data): an engine whose runs check memory
	// against a region list of its own needs them when this is not 0.
	StaticRegions func(prog unsafe.Pointer) int
)

// ArrayMap describes an array map that an engine may index directly for
// calls of an ArrayLookup helper: the address of its memory, the distance
// between elements and the number of elements. Base is 0 for a map the
// engine must leave to the helper.
type ArrayMap struct {
	Base, Stride, N uint64
}

// MapEntrySize is the size of an entry of a program's map table (a
// vm.Map, an interface value).
const MapEntrySize = uint64(unsafe.Sizeof(any(nil)))

// The root package's Program.Run (run_linux_amd64.s) jumps to package
// jit's runRoot or runRootStackless, which find the *jit.Program in the
// root Program's first field. Which one it may take is the first byte of
// the jit.Program: PathPlain or PathStackless (package jit asserts both).
const (
	PathPlain     = 2
	PathStackless = 3
)

// RootPath returns where the root package's Run may jump for a
// *jit.Program (nil: nowhere).
func RootPath(jitProgram unsafe.Pointer) (plain, stackless bool) {
	if jitProgram == nil {
		return false, false
	}
	path := *(*uint8)(jitProgram)
	return path >= PathPlain, path == PathStackless
}
