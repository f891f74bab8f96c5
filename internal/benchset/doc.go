// Package benchset is the standard userspace eBPF benchmark set (the
// programs of uBPF's and bpf-benchmark's suites), written in C in c/ with
// committed objects, their inputs, expected results and native Go
// equivalents. Its tests check every program on every engine; its
// benchmarks (BenchmarkSet/<name>/<engine|native>) give the ratios that
// BENCHMARKS.md reports.
package benchset

//go:generate sh -c "for f in c/*.bpf.c; do clang-19 -O2 -g -target bpf -mcpu=v3 -I/usr/include/x86_64-linux-gnu -I../../examples/include -c $DOLLAR{f} -o $DOLLAR{f%.c}.o || exit 1; done"
