// Package benchset is the standard userspace eBPF benchmark set (the
// programs of uBPF's and bpf-benchmark's suites), written in C in c/ with
// committed objects, their inputs, expected results and native Go
// equivalents. Its tests check every program on every engine; its
// benchmarks (BenchmarkSet/<name>/<engine|native>) give the ratios that
// BENCHMARKS.md reports.
package benchset

//go:generate go run github.com/uebpf/uebpf/internal/bpfbuild/cmd/bpfbuild c/*.bpf.c
