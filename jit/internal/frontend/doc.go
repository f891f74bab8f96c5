// Package frontend holds the JIT's architecture-neutral analyses of a
// program: what every back end (x86-64 today, arm64 and others later)
// needs to know before emitting a slot, computed once per compile from the
// eBPF instructions alone.
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
//     the accesses hoisted and the address ranges they reach (Hoists).
//
// An Analysis keeps its buffers across compiles, so that a pooled back
// end compiles without allocating in the steady state. Nothing here knows
// about machine code; emission state stays in the back end.
package frontend
