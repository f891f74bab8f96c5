package helpers

import "github.com/uebpf/uebpf/vm"

// Prototypes, transcribed from Linux's bpf_func_proto of each helper
// (kernel/bpf/helpers.c, kernel/trace/bpf_trace.c, kernel/bpf/ringbuf.c).
// Where vm.ArgKind has no exact counterpart of a Linux argument type the
// closest stricter kind is used; the comment says which.

func proto(ret vm.ReturnKind, args ...vm.ArgKind) *vm.Prototype {
	p := &vm.Prototype{Ret: ret, RetSizeArg: -1}
	copy(p.Args[:], args)
	return p
}

func gplProto(ret vm.ReturnKind, args ...vm.ArgKind) *vm.Prototype {
	p := proto(ret, args...)
	p.GPLOnly = true
	return p
}

var (
	protoNoArgs = proto(vm.RetInteger)

	protoLookup = proto(vm.RetMapValueOrNull, vm.ArgMapPointer, vm.ArgMapKey)
	protoUpdate = proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMapKey, vm.ArgMapValue, vm.ArgAnything)
	protoDelete = proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMapKey)
	protoPush   = proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMapValue, vm.ArgAnything)
	// Linux: ARG_PTR_TO_MAP_VALUE | MEM_UNINIT | MEM_WRITE. ArgMapValue
	// asks for initialised memory, which is stricter.
	protoPopPeek      = proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMapValue)
	protoLookupPercpu = proto(vm.RetMapValueOrNull, vm.ArgMapPointer, vm.ArgMapKey, vm.ArgAnything)

	protoTailCall = proto(vm.RetVoid, vm.ArgContext, vm.ArgMapPointer, vm.ArgAnything)
	protoGetComm  = proto(vm.RetInteger, vm.ArgUninitMemory, vm.ArgConstSize)

	// probe_read_user, probe_read_user_str and the compat probe_read,
	// probe_read_str share one prototype (gpl_only in Linux).
	protoProbeRead = gplProto(vm.RetInteger, vm.ArgUninitMemory, vm.ArgConstSizeOrZero, vm.ArgAnything)

	protoTracePrintk = gplProto(vm.RetInteger, vm.ArgMemory, vm.ArgConstSize)
	// Linux: data is ARG_PTR_TO_MEM | PTR_MAYBE_NULL | MEM_RDONLY; vm has
	// no "or null" modifier, so NULL with size 0 is left to the verifier.
	protoTraceVprintk = gplProto(vm.RetInteger, vm.ArgMemory, vm.ArgConstSize, vm.ArgMemory, vm.ArgConstSizeOrZero)
	// Linux: str is ARG_PTR_TO_MEM_OR_NULL | MEM_WRITE, data as above.
	protoSnprintf = gplProto(vm.RetInteger, vm.ArgUninitMemory, vm.ArgConstSizeOrZero,
		vm.ArgConstString, vm.ArgMemory, vm.ArgConstSizeOrZero)

	protoRingbufOutput = proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgMemory, vm.ArgConstSizeOrZero, vm.ArgAnything)
	// Linux: size is ARG_CONST_ALLOC_SIZE_OR_ZERO, the size of the record
	// returned (RetSizeArg), not of a memory argument.
	protoRingbufReserve = &vm.Prototype{
		Args:       [5]vm.ArgKind{vm.ArgMapPointer, vm.ArgConstSizeOrZero, vm.ArgAnything},
		Ret:        vm.RetAcquiredRecordOrNull,
		RetSizeArg: 1,
	}
	protoRingbufCommit = proto(vm.RetVoid, vm.ArgReleasedRecord, vm.ArgAnything)
	protoRingbufQuery  = proto(vm.RetInteger, vm.ArgMapPointer, vm.ArgAnything)

	// Linux: callback_ctx is ARG_PTR_TO_STACK_OR_NULL; the helper only
	// passes it on to the callback.
	protoLoop    = proto(vm.RetInteger, vm.ArgAnything, vm.ArgFunction, vm.ArgAnything, vm.ArgAnything)
	protoStrncmp = proto(vm.RetInteger, vm.ArgMemory, vm.ArgConstSize, vm.ArgConstString)
)
