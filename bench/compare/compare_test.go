package main

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/interludehq/interlude/bench/workloads"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
		{[]float64{math.NaN(), 5, 1}, 3},
	} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Median([]float64{math.NaN()})) {
		t.Error("Median of nothing is not NaN")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		r    float64
		u    unit
		want string
	}{
		{132.4, micros, "×132 faster"},
		{1520, micros, "×1,520 faster"},
		{10.66, micros, "×10.7 faster"},
		{3.931, micros, "×3.93 faster"},
		{0.5, micros, "×2.00 slower"},
		{87.08, sizeBytes, "×87.1 less"},
		{0.25, sizeBytes, "×4.00 more"},
		{math.NaN(), micros, "n/a"},
		{math.Inf(1), micros, "n/a"},
	} {
		if got := FormatRatio(tc.r, tc.u); got != tc.want {
			t.Errorf("FormatRatio(%v) = %q, want %q", tc.r, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    float64
		u    unit
		want string
	}{
		{54.391, micros, "54.39"},
		{543.9, micros, "543.9"},
		{71915.2, micros, "71,915"},
		{151552, sizeBytes, "151,552 (148.0 KiB)"},
		{13197312, sizeBytes, "13,197,312 (12.6 MiB)"},
		{1228869632, sizeBytes, "1,228,869,632 (1.14 GiB)"},
		{900, sizeBytes, "900"},
		{1.3333, factor, "1.33"},
		{math.NaN(), micros, "n/a"},
	} {
		if got := FormatValue(tc.v, tc.u); got != tc.want {
			t.Errorf("FormatValue(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func samples(key string, vs ...float64) []Sample {
	out := make([]Sample, len(vs))
	for i, v := range vs {
		out[i] = Sample{Metrics: map[string]float64{key: v}}
	}
	return out
}

func growthSample(first, last, db, wal, shm float64, turns int) Sample {
	return Sample{Metrics: map[string]float64{
		"turn_us_first_decile": first, "turn_us_last_decile": last, "turn_us_mean": (first + last) / 2,
		"bytes_on_disk_db": db, "bytes_on_disk_wal": wal, "bytes_on_disk_shm": shm, "bytes_on_disk": db + wal + shm,
		"transcript_bytes": float64(workloads.TranscriptBytes(turns)),
	}}
}

func find(t *testing.T, rows []Row, store, metric string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Store == store && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %s / %s", store, metric)
	return Row{}
}

func TestRowsTargetsAndTable(t *testing.T) {
	mem := Case{Workload: workloads.Chain10, Store: workloads.Memory}
	full := Case{Workload: workloads.Chain10, Store: workloads.SQLite, PeerSync: SyncFull}
	normal := Case{Workload: workloads.Chain10, Store: workloads.SQLite, PeerSync: SyncDefault}
	il := map[Case][]Sample{
		mem:         samples("step_us", 3, 1, 2),       // median 2
		full.Side(): samples("step_us", 100, 300, 200), // median 200
	}
	lg := map[Case][]Sample{
		mem:    samples("step_us", 600, 400, 500, 10000), // median 550: ×275, met (≥100)
		full:   samples("step_us", 900, 800, 1000),       // median 900: ×4.5, missed (≥5)
		normal: samples("step_us", 1000, 1100, 1200),     // median 1100: ×5.5, missed (≥20)
	}
	rows := Rows([]Case{mem, full, normal}, il, lg)
	r := find(t, rows, "memory", "step µs (mean)")
	if r.Interlude != 2 || r.LangGraph != 550 || r.Ratio() != 275 || r.Verdict() != "met" || r.Target.Text != "≥ 100× faster" {
		t.Errorf("memory row %+v verdict %s", r, r.Verdict())
	}
	r = find(t, rows, full.storeLabel(), "step µs (mean)")
	if r.Ratio() != 4.5 || r.Verdict() != "**missed**" || r.Target.Text != "≥ 5× faster" {
		t.Errorf("sqlite FULL row ratio %v verdict %s", r.Ratio(), r.Verdict())
	}
	if r := find(t, rows, normal.storeLabel(), "step µs (mean)"); r.Interlude != 200 || r.Verdict() != "**missed**" || r.Target.Text != "≥ 20× faster" {
		t.Errorf("sqlite NORMAL row %+v verdict %s", r, r.Verdict())
	}
	if r := find(t, rows, "memory", "run µs (mean)"); r.Target != nil || r.Verdict() != "" || !math.IsNaN(r.Interlude) {
		t.Errorf("run row without data or target: %+v", r)
	}

	tab := Table(rows)
	lines := strings.Split(strings.TrimSpace(tab), "\n")
	if len(lines) != 2+len(rows) {
		t.Fatalf("table has %d lines for %d rows:\n%s", len(lines), len(rows), tab)
	}
	if !strings.HasPrefix(lines[0], "| workload | store | metric | Interlude | peer |") {
		t.Errorf("header %q", lines[0])
	}
	want := "| chain10 | memory | step µs (mean) | 2.00 | 550.0 | ×275 faster | ≥ 100× faster | met |"
	if !slices.Contains(lines, want) {
		t.Errorf("table lacks %q:\n%s", want, tab)
	}
	if !strings.Contains(tab, "| n/a | n/a | n/a | — |  |") {
		t.Errorf("row without data not shown as n/a:\n%s", tab)
	}
}

func TestGrowthTargets(t *testing.T) {
	c200 := Case{Workload: workloads.Growth, Store: workloads.SQLite, Turns: 200, PeerSync: SyncFull}
	c1000 := Case{Workload: workloads.Growth, Store: workloads.SQLite, Turns: 1000, PeerSync: SyncFull}
	il := map[Case][]Sample{
		c200.Side():  {growthSample(100, 110, 100_000, 0, 32768, 200), growthSample(100, 130, 120_000, 0, 32768, 200), growthSample(100, 200, 110_000, 0, 32768, 200)},
		c1000.Side(): {growthSample(100, 130, 500_000, 0, 32768, 1000)},
	}
	lg := map[Case][]Sample{
		c200:  {growthSample(100, 90, 13_000_000, 0, 32768, 200)},
		c1000: {growthSample(100, 90, 300_000_000, 0, 32768, 1000)},
	}
	rows := Rows([]Case{c200, c1000}, il, lg)
	// Decile ratios 1.1, 1.3, 2.0: median 1.3 > 1.2.
	flat := rows[slices.IndexFunc(rows, func(r Row) bool { return r.Metric == "turn time last/first decile" })]
	if math.Abs(flat.Interlude-1.3) > 1e-9 || flat.Verdict() != "**missed**" || !flat.Target.InterludeOnly {
		t.Errorf("flatness row %+v verdict %s", flat, flat.Verdict())
	}
	// db + wal: median 110,000 vs 13,000,000 = ×118 ≥ 100.
	disk := rows[slices.IndexFunc(rows, func(r Row) bool { return r.Metric == "bytes on disk (db + wal after checkpoint)" })]
	if disk.Interlude != 110_000 || disk.LangGraph != 13_000_000 || disk.Verdict() != "met" {
		t.Errorf("storage row %+v verdict %s", disk, disk.Verdict())
	}
	// The storage target applies at 200 turns only.
	n := 0
	for _, r := range rows {
		if r.Target != nil && r.Target.Text == "≥ 100× less" {
			n++
			if r.Workload != "growth (200 turns)" {
				t.Errorf("storage target on %s", r.Workload)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d storage targets, want 1", n)
	}
	per := rows[slices.IndexFunc(rows, func(r Row) bool { return r.Metric == "bytes on disk / transcript byte" })]
	if want := 110_000 / float64(workloads.TranscriptBytes(200)); math.Abs(per.Interlude-want) > 1e-9 {
		t.Errorf("bytes per transcript byte %v, want %v", per.Interlude, want)
	}
}

func TestCasesAndArgs(t *testing.T) {
	cs := Cases([]int{200, 1000})
	// chain10, hitl_cycle, parallel_resume: memory + sqlite×2; growth: that per
	// turn count; the agent approval cycle in memory against the OpenAI Agents SDK.
	if len(cs) != 3*3+2*3+1 {
		t.Fatalf("%d cases", len(cs))
	}
	r := &runner{}
	full := Case{Workload: workloads.Growth, Store: workloads.SQLite, Turns: 1000, PeerSync: SyncFull}
	if got := strings.Join(r.peerArgs(full), " "); got != "bench.mjs --workload growth --store sqlite --turns 1000 --synchronous full" {
		t.Errorf("peer args %q", got)
	}
	def := Case{Workload: workloads.Chain10, Store: workloads.SQLite, PeerSync: SyncDefault}
	if got := strings.Join(r.peerArgs(def), " "); got != "bench.mjs --workload chain10 --store sqlite" {
		t.Errorf("peer args %q (the peer runs with its own defaults unless -quick)", got)
	}
	if got := strings.Join(r.interludeArgs(full.Side()), " "); got != "-worker -workload growth -store sqlite -turns 1000" {
		t.Errorf("interlude args %q", got)
	}
	r.quick = true
	if got := strings.Join(r.peerArgs(def), " "); !strings.HasSuffix(got, "--iterations 30 --warmup 5") {
		t.Errorf("quick peer args %q", got)
	}
	if _, err := parseTurns("200, 1000,2000"); err != nil {
		t.Error(err)
	}
	if _, err := parseTurns("200,x"); err == nil {
		t.Error("bad turn count accepted")
	}
}

func TestEachSpeedRowIsJudgedAgainstItsOwnBar(t *testing.T) {
	for _, tc := range []struct {
		c    Case
		want string
	}{
		{Case{Workload: workloads.Chain10, Store: workloads.Memory}, "≥ 100× faster"},
		{Case{Workload: workloads.HITLCycle, Store: workloads.Memory}, "≥ 100× faster"},
		{Case{Workload: workloads.Chain10, Store: workloads.SQLite, PeerSync: SyncDefault}, "≥ 20× faster"},
		{Case{Workload: workloads.HITLCycle, Store: workloads.SQLite, PeerSync: SyncDefault}, "≥ 8× faster"},
		{Case{Workload: workloads.Chain10, Store: workloads.SQLite, PeerSync: SyncFull}, "≥ 5× faster"},
		{Case{Workload: workloads.HITLCycle, Store: workloads.SQLite, PeerSync: SyncFull}, "≥ 5× faster"},
	} {
		if got := speedTarget(tc.c).Text; got != tc.want {
			t.Errorf("%s on %s against %q: target %q, want %q", tc.c.Workload, tc.c.Store, tc.c.PeerSync, got, tc.want)
		}
	}
}
