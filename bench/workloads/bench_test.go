package workloads

import (
	"context"
	"fmt"
	"testing"
)

func openB(b *testing.B, kind string) *Store {
	b.Helper()
	st, err := OpenStore(kind, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// BenchmarkChain10 runs chain10 (ten nodes in a line, a new thread per run) and
// reports the time per step besides the time per run.
func BenchmarkChain10(b *testing.B) {
	ctx := context.Background()
	for _, kind := range Stores {
		b.Run(kind, func(b *testing.B) {
			g, err := NewChain10(openB(b, kind))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for b.Loop() {
				if err := RunChain10(ctx, g, threadID("chain10")); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*10), "ns/step")
		})
	}
}

// BenchmarkInterruptCycle runs hitl_cycle: a new thread pauses on an interrupt and
// is resumed to its end; one op is one cycle.
func BenchmarkInterruptCycle(b *testing.B) {
	ctx := context.Background()
	for _, kind := range Stores {
		b.Run(kind, func(b *testing.B) {
			g, err := NewHITL(openB(b, kind))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				id := threadID("hitl")
				if err := Pause(ctx, g, id); err != nil {
					b.Fatal(err)
				}
				if err := Approve(ctx, g, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGrowth runs growth (one thread, one 200-byte message appended per
// turn) for 200 and 2000 turns on a fresh store per op, and reports the time per
// turn, the mean turn time of the first and last tenth of the turns, and the
// storage per transcript byte: the database file and its -wal after a checkpoint
// for SQLite, the stored record and snapshot bytes for memory.
func BenchmarkGrowth(b *testing.B) {
	ctx := context.Background()
	for _, kind := range Stores {
		for _, turns := range []int{200, 2000} {
			b.Run(fmt.Sprintf("%s/turns=%d", kind, turns), func(b *testing.B) {
				var first, last, ratio float64
				n := 0
				for b.Loop() {
					b.StopTimer()
					st, err := OpenStore(kind, b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					g, err := NewGrowth(st)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					run, err := RunGrowth(ctx, g, turns)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					m, err := GrowthMetrics(ctx, st, run)
					if err != nil {
						b.Fatal(err)
					}
					st.Close()
					first += m["turn_us_first_decile"]
					last += m["turn_us_last_decile"]
					if kind == SQLite { // database file + -wal after the checkpoint, as the comparison's target
						ratio += (m["bytes_on_disk_db"] + m["bytes_on_disk_wal"]) / m["transcript_bytes"]
					} else {
						ratio += m["ratio"]
					}
					n++
					b.StartTimer()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*turns), "ns/turn")
				b.ReportMetric(first/float64(n)*1000, "ns/turn-first-decile")
				b.ReportMetric(last/float64(n)*1000, "ns/turn-last-decile")
				b.ReportMetric(ratio/float64(n), "bytes/transcript-byte")
				b.ReportMetric(0, "ns/op") // one op is a whole thread; ns/turn is the figure
			})
		}
	}
}

// BenchmarkAgentApproval runs agent_approval as bench/compare does: a new
// thread's turn calls two lookups and a gated refund, pauses on the refund's
// approval, and is approved to its end; one op is one cycle.
func BenchmarkAgentApproval(b *testing.B) {
	ctx := context.Background()
	for _, kind := range Stores {
		b.Run(kind, func(b *testing.B) {
			a, s, err := NewAgentApproval(openB(b, kind))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				id := threadID("agent")
				if err := AgentPause(ctx, a, s, id); err != nil {
					b.Fatal(err)
				}
				if err := AgentApprove(ctx, a, s, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
