// Package workload builds the C workloads of the latency tracker's tests
// and benchmarks (testdata/workload.c): a fork storm that wraps the id space,
// thread-id reuse on demand, and a getppid loop. It is test machinery.
package workload
