package graph_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

var update = flag.Bool("update", false, "rewrite the golden format fixtures of the current format version")

// fixture is a thread's log as stored by one released format version, and what
// reading it must give.
type fixture struct {
	Format  int             `json:"format"`
	Records []fixtureRecord `json:"records"`
	Want    struct {
		Status     interlude.ThreadStatus   `json:"status"`
		Values     refundState              `json:"values"`
		Interrupts []interlude.Interruption `json:"interrupts"`
	} `json:"want"`
}

// fixtureRecord is a store.Record with its data shown as JSON, so fixtures are
// readable in review.
type fixtureRecord struct {
	Version int64           `json:"version"`
	Format  int             `json:"format"`
	Kind    string          `json:"kind"`
	At      time.Time       `json:"created_at"`
	Data    json.RawMessage `json:"data"`
}

// writeFixture writes the log of thread in st to path as the current format
// version's fixture, with what want sets reading it must give.
func writeFixture(t *testing.T, st store.Store, thread, path string, want func(*fixture)) {
	t.Helper()
	recs, _ := st.Records(context.Background(), thread, 0, 0, 0)
	fx := fixture{Format: store.FormatVersion}
	for _, r := range recs {
		fx.Records = append(fx.Records, fixtureRecord{Version: r.Version, Format: r.Format, Kind: r.Kind, At: r.CreatedAt, Data: r.Data})
	}
	if want != nil {
		want(&fx)
	}
	data, _ := json.MarshalIndent(fx, "", "  ")
	os.MkdirAll("testdata", 0o755)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// eachFixture runs check as a subtest for every file of testdata matching
// pattern, and fails if none does.
func eachFixture(t *testing.T, pattern string, check func(t *testing.T, file string)) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	if len(files) == 0 {
		t.Fatalf("no golden fixtures testdata/%s", pattern)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { check(t, file) })
	}
}

// readFixture reads the fixture in file, and returns it with a store holding
// its log as thread of graph graphName.
func readFixture(t *testing.T, file, thread, graphName string) (fixture, store.Store) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	var recs []store.Record
	for _, r := range fx.Records {
		recs = append(recs, store.Record{Version: r.Version, Format: r.Format, Kind: r.Kind, CreatedAt: r.At, Data: r.Data})
	}
	status := fx.Want.Status
	if status == "" {
		status = interlude.ThreadInterrupted
	}
	if err := st.Append(context.Background(), store.Append{ThreadID: thread, Meta: store.Meta{Graph: graphName, Status: status}, Records: recs}); err != nil {
		t.Fatal(err)
	}
	return fx, st
}

func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

// TestGoldenFormatFixturesStayReadable reads the committed logs of every released
// format version, checks the state they give, and resumes each paused thread to the
// end. Run with -update to add the current version's fixture.
func TestGoldenFormatFixturesStayReadable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join("testdata", fmt.Sprintf("format-v%d-refund-paused.json", store.FormatVersion))
	if *update {
		st := memory.New()
		app := refundGraph(t, st, graph.WithClock(fixedClock()))
		app.Invoke(ctx, "order-7", graph.Input(refundState{Amount: 70}))
		app.Invoke(ctx, "order-7", graph.Resume(interlude.Resolve(map[string]any{"approved": "not a boolean"}))) // refused, not stored
		snap, _ := app.State(ctx, "order-7")
		writeFixture(t, st, "order-7", path, func(fx *fixture) {
			fx.Want.Status, fx.Want.Values, fx.Want.Interrupts = snap.Status, snap.Values, snap.Interrupts
		})
	}
	eachFixture(t, "format-v*.json", func(t *testing.T, file string) {
		fx, st := readFixture(t, file, "order-7", "refund")
		app := refundGraph(t, st)
		snap, err := app.State(ctx, "order-7")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal([]any{snap.Status, snap.Values, snap.Interrupts})
		want, _ := json.Marshal([]any{fx.Want.Status, fx.Want.Values, fx.Want.Interrupts})
		if string(got) != string(want) {
			t.Fatalf("format %d reads as\n%s\nwant\n%s", fx.Format, got, want)
		}
		res, err := app.Invoke(ctx, "order-7", graph.Resume(interlude.Resolve(map[string]any{"approved": true})))
		if err != nil || res.Values.Outcome != "refunded" || res.Values.Attempts != 2 {
			t.Fatalf("resuming a format %d thread: %v %+v", fx.Format, err, res)
		}
	})
}

func TestUnknownFormatVersionIsRefused(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	app := refundGraph(t, st)
	app.Invoke(ctx, "x", graph.Input(refundState{Amount: 1}))
	recs, _ := st.Records(ctx, "x", 0, 0, 0)
	var d map[string]any
	json.Unmarshal(recs[0].Data, &d)
	d["v"] = store.FormatVersion + 1
	data, _ := json.Marshal(d)
	st2 := memory.New()
	st2.Append(ctx, store.Append{ThreadID: "x", Meta: store.Meta{Graph: "refund"}, Records: []store.Record{{Version: 1, Format: store.FormatVersion, Kind: "pause", Data: data}}})
	_, err := refundGraph(t, st2).State(ctx, "x")
	if !errErrUnknownFormat(err) {
		t.Fatalf("err = %v", err)
	}
}

func errErrUnknownFormat(err error) bool {
	var ie *interlude.Error
	return err != nil && asError(err, &ie) && ie.Code == interlude.CodeUnknownFormat
}

func asError(err error, target **interlude.Error) bool {
	for err != nil {
		if e, ok := err.(*interlude.Error); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
