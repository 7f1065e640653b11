// Package cputime reads the CPU time the process has used, for benchmarks
// that report CPU per operation (cpu-ns/op), which a shared machine distorts
// less than wall time.
package cputime
