package workloads

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestMessageMatchesPeer(t *testing.T) {
	if len(Lorem) != 226 {
		t.Fatalf("Lorem is %d bytes; bench.mjs's GROWTH_LOREM is 226", len(Lorem))
	}
	for _, turn := range []int{0, 7, 199, 12345} {
		m := Message(turn)
		if len(m) != 200 || !strings.HasPrefix(m, "m") || !strings.Contains(m, " lorem ipsum dolor") {
			t.Fatalf("Message(%d) = %q (%d bytes)", turn, m, len(m))
		}
	}
	if got, want := Message(0), "m0 lorem ipsum dolor sit amet"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "nisi ut al") {
		t.Fatalf("Message(0) = %q", got)
	}
	for _, turns := range []int{1, 2, 200} {
		msgs := make([]string, turns)
		for i := range msgs {
			msgs[i] = Message(i)
		}
		data, _ := json.Marshal(msgs)
		if len(data) != TranscriptBytes(turns) {
			t.Fatalf("transcript of %d turns is %d bytes, TranscriptBytes says %d", turns, len(data), TranscriptBytes(turns))
		}
	}
}

// TestWorkloads runs every workload briefly on both stores. Run checks each
// run's result (counter 10, outcome refunded, five answers, the transcript);
// here the metrics are checked for shape.
func TestWorkloads(t *testing.T) {
	ctx := context.Background()
	for _, kind := range Stores {
		for _, w := range append(slices.Clone(Names), AgentNames...) {
			t.Run(w+"/"+kind, func(t *testing.T) {
				c := Config{Workload: w, Store: kind, Iterations: 5, Warmup: 2, Turns: 40, Dir: t.TempDir()}
				res, err := Run(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if res.Peer != "interlude" || res.Workload != w || res.Store != kind {
					t.Fatalf("result is %s/%s/%s", res.Peer, res.Workload, res.Store)
				}
				m := res.Metrics
				positive := func(names ...string) {
					t.Helper()
					for _, n := range names {
						if !(m[n] > 0) {
							t.Errorf("metric %s = %v, want > 0 (metrics %v)", n, m[n], m)
						}
					}
				}
				switch w {
				case Chain10:
					positive("step_us", "run_us", "run_us_p50", "run_us_p99")
				case HITLCycle, AgentApproval:
					positive("pause_us", "resume_us", "cycle_us")
				case ParallelResume:
					positive("pause_us", "finish_us", "cycle_us")
				case Growth:
					positive("turn_us_mean", "turn_us_first_decile", "turn_us_last_decile", "payload_bytes", "ratio")
					if m["transcript_bytes"] != float64(TranscriptBytes(40)) || m["turns"] != 40 || res.N != 40 {
						t.Errorf("transcript %v bytes after %v turns, want %d after 40", m["transcript_bytes"], m["turns"], TranscriptBytes(40))
					}
					// One record per turn (the step carries its input), each holding the
					// 200-byte message and little else.
					if m["n_records"] != 40 || m["payload_records_bytes"] < float64(40*200) || m["payload_records_bytes"] > float64(40*400) {
						t.Errorf("%v records of %v bytes for 40 turns", m["n_records"], m["payload_records_bytes"])
					}
					if kind == SQLite {
						positive("bytes_on_disk", "bytes_on_disk_db", "store_size")
						if m["bytes_on_disk_wal"] != 0 {
							t.Errorf("-wal is %v bytes after a TRUNCATE checkpoint", m["bytes_on_disk_wal"])
						}
					} else {
						positive("bytes_in_memory")
					}
				}
				if kind == SQLite && res.Config["synchronous"] != "full" {
					t.Errorf("config %v", res.Config)
				}
			})
		}
	}
}

func TestPctAndMeanMatchPeer(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if Mean(xs) != 3 {
		t.Fatalf("mean %v", Mean(xs))
	}
	// bench.mjs: sorted[min(n-1, floor(p/100*n))]
	for p, want := range map[float64]float64{0: 1, 50: 3, 99: 5, 100: 5, 20: 2} {
		if got := Pct(xs, p); got != want {
			t.Errorf("Pct(%v) = %v, want %v", p, got, want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{Workload: Chain10, Store: Memory, Warmup: -1}.withDefaults()
	if err != nil || c.Iterations != DefaultIterations[Chain10][Memory] || c.Warmup != max(20, (c.Iterations+9)/10) || c.Turns != DefaultTurns {
		t.Fatalf("%+v %v", c, err)
	}
	c, _ = Config{Workload: Growth, Store: SQLite, Warmup: -1}.withDefaults()
	if c.Warmup != 50 {
		t.Fatalf("growth warm-up %d, want 50", c.Warmup)
	}
	if _, err := (Config{Workload: "nope", Store: Memory}).withDefaults(); err == nil {
		t.Fatal("unknown workload accepted")
	}
	if _, err := (Config{Workload: Chain10, Store: "postgres"}).withDefaults(); err == nil {
		t.Fatal("unknown store accepted")
	}
}
