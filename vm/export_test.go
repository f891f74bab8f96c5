package vm

// SetInterpretSlice sets the interpreter's slice of the budget and returns
// a function that restores it.
func SetInterpretSlice(n uint64) (restore func()) {
	old := interpretSlice
	interpretSlice = n
	return func() { interpretSlice = old }
}
