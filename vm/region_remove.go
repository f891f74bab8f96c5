package vm

import "unsafe"

// RemoveRegion withdraws from the run the memory at [p, p+size): every
// region that overlaps it stops allowing any access, and it returns how
// many did. Helpers call it when they take back memory they handed out,
// such as a ring buffer record at bpf_ringbuf_submit: the record's bytes
// then belong to the reader and, once read, to later records, so the
// program must not keep writing them through the pointer it still holds.
//
// A removed region is emptied in place (lo = hi = 0 allows no access of
// one byte or more), so the indices the engines hold stay meaningful: the
// interpreter's last-hit index, the regions a run started with
// (st.Regions[:st.Fixed]) and the length Exec and endRun truncate the list
// to after the run. Emptied regions at the end of the list of those the
// run added are dropped, so that a program that reserves and submits in a
// loop keeps a short list. Engines read the list again after every helper
// call (Regions), so the change applies to the next access.
func (e *Env) RemoveRegion(p unsafe.Pointer, size uintptr) int {
	lo := uint64(uintptr(p))
	hi := lo + uint64(size)
	if size == 0 || hi < lo {
		return 0
	}
	n := 0
	for i := range e.st.Regions {
		r := &e.st.Regions[i]
		if r.lo < hi && lo < r.hi {
			*r = region{}
			n++
		}
	}
	if n == 0 {
		return 0
	}
	// Only regions past those the run started with may go: Exec
	// truncates to a length at most st.Fixed after the run.
	end := len(e.st.Regions)
	for end > e.st.Fixed && e.st.Regions[end-1] == (region{}) {
		end--
	}
	e.st.Regions = e.st.Regions[:end]
	e.st.Hit = 0
	return n
}
