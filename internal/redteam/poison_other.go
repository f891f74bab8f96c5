//go:build !amd64

package redteam

// callPoisoned calls f(ctx): only amd64 has direct entries to poison.
func callPoisoned(f func([]byte) (uint64, error), ctx []byte, _ uintptr) (uint64, error) {
	return f(ctx)
}
