// Package engine is the contract between uebpf's engines (the interpreter
// of package vm, the native code of package jit) and the packages whose
// programs and maps they run (vm, maps, the root package). It is not API:
// vm and maps export what an embedder uses and keep what only engines use
// here, so that it can change with the engines.
//
// It holds the layout of the run state that generated code reads at fixed
// offsets (Env, Region), the operations on a run and a program that only
// engines make, the recipe of inline hash map updates (HashLayout) and
// the root package's entry into the JIT (Path*).
//
// It imports no other uebpf package, so that all of them may import it.
// An operation whose body needs another package's private types is
// defined there and reaches engine one of two ways. A hot one (once per
// run or per helper call) is a function declared here without a body and
// bound with //go:linkname: vm pushes its functions here, and HashLookup
// and HashUpdate name the hash map's own methods. Either is one direct
// call, as cheap as the exported method it replaces; an indirect call
// would cost every run. A cold one (compile time) is a function variable
// the package sets when it initialises. The layouts both sides rely on
// are compile-time assertions in the package that owns the memory.
package engine
