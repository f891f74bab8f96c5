package verifier

// The corpus of clang-built programs the tests verify (testdata/corpus):
// the committed objects are rebuilt from their sources with
//
//go:generate sh -c "cd testdata/corpus && for f in *.bpf.c; do clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../../../examples/include -c $DOLLAR{f} -o $DOLLAR{f%.c}.o || exit 1; done"
