// Package frontend holds the JIT's architecture-neutral analyses of a
// program: what every back end (jit/internal/backend/amd64 and arm64)
// needs to know before emitting a slot, computed once per compile from the
// eBPF instructions alone, and the bookkeeping a back end keeps while it
// emits the slots in order.
//
// A back end holds an Analysis, calls Analyze at the start of each
// compile and reads its results while emitting:
//
//   - blocks (Starts): where the budget is charged and what the emitter
//     knows of registers is forgotten;
//   - loops (BackEdges, LoopHead, LoopEnd, LeavesLoop): where to align
//     code and which forward jumps are usually not taken;
//   - what the program does (Local, Calls, Lookups, Packet, Memory,
//     HotUsed), which decides the stubs and run paths it needs;
//   - liveness: the registers a run's start must set up (LiveIn) and
//     whether a value is dead after a slot (DeadAfter);
//   - compare trees worth a jump table (Switches);
//   - counted loops whose memory checks can be hoisted out of them, with
//     the accesses hoisted and the address ranges they reach (Hoists);
//   - copy, fill and compare loops a back end may run wide (Copies,
//     with Options.Idioms).
//
// While emitting, a back end keeps:
//
//   - a Stretch: the budget stretch it is in, charged once at the
//     instruction that ends it, as the interpreter charges it;
//   - a Tracking (amd64): what it knows inside a block, registers that
//     hold r10 plus a constant (their in-frame accesses need no check),
//     stack slots that hold a register (a reload is a move) and the
//     constant in r1 after lddw (inline lookups).
//
// An Analysis keeps its buffers across compiles, so that a pooled back
// end compiles without allocating in the steady state. Nothing here knows
// about machine code; emission state (code offsets, patches, stubs)
// stays in the back end.
package frontend
