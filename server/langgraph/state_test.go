package langgraph_test

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/interludehq/interlude/store/sqlite"
)

func TestTheValuesModeSendsTheStateAfterEveryStep(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	r := s.must(200, "POST", "/threads/"+id+"/runs/stream", map[string]any{"input": map[string]any{"topic": "tea"}, "assistant_id": "gated",
		"stream_mode": []string{"values", "updates"}}, nil)
	var got []string
	for _, e := range events(t, r.body) {
		if e.name == "values" || e.name == "updates" {
			got = append(got, e.name+" "+string(e.data))
		}
	}
	want := []string{
		`values {"topic":"tea"}`,
		`updates {"draft":{"draft":"A short note about tea."}}`,
		`values {"topic":"tea","draft":"A short note about tea."}`,
		`updates {"__interrupt__":[]}`,
		`values {"__interrupt__":[],"draft":"A short note about tea.","topic":"tea"}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the stream sent\n%q\nwant\n%q", got, want)
	}
	// Past the breakpoint: the state as the run finds it, then after review.
	r = s.must(200, "POST", "/threads/"+id+"/runs/stream", map[string]any{"assistant_id": "gated", "stream_mode": "values"}, nil)
	vals := named(events(t, r.body), "values")
	if len(vals) < 2 || string(vals[0].data) != `{"topic":"tea","draft":"A short note about tea."}` ||
		string(vals[1].data) != `{"topic":"tea","draft":"A short note about tea.","reviewed":true}` {
		t.Fatalf("the second run's values are %v", vals)
	}
}

func TestCommandUpdateAndGotoChangeTheStateAndTheRunGoesOn(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"topic": "tea"}, "assistant_id": "gated"}, nil)
	// At the breakpoint after draft, an update as [field, value] pairs, then review runs.
	var out map[string]any
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"update": [][]any{{"draft", "by hand"}}}, "assistant_id": "gated"}, &out)
	if out["draft"] != "by hand" || out["reviewed"] != true || out["published"] != nil {
		t.Fatalf("after the update the run ended with %v, want the edited draft reviewed and paused before publish", out)
	}
	if st := s.state(id); !slices.Equal(st.Next, []string{"publish"}) {
		t.Fatalf("after the update the thread is due at %v, want publish", st.Next)
	}
	// Go back to draft with a new topic: draft runs again.
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"update": map[string]any{"topic": "coffee"}, "goto": "draft"}, "assistant_id": "gated"}, &out)
	if out["draft"] != "A short note about coffee." {
		t.Fatalf("goto draft ended with %v", out)
	}
	before := s.state(id)
	r := s.call("POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"goto": "nowhere"}, "assistant_id": "gated"})
	if r.status != 422 {
		t.Fatalf("goto an unknown node answered %d %s, want 422", r.status, r.body)
	}
	if after := s.state(id); *after.Checkpoint.CheckpointID != *before.Checkpoint.CheckpointID {
		t.Fatal("the refused goto changed the thread")
	}
}

func TestPostStateWritesValuesAsANodeAndRefusesToPassAQuestionBy(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"topic": "tea"}, "assistant_id": "gated"}, nil)
	var res struct {
		Checkpoint checkpointObj `json:"checkpoint"`
	}
	s.must(200, "POST", "/threads/"+id+"/state", map[string]any{"values": map[string]any{"draft": "by hand"}, "as_node": "review"}, &res)
	st := s.state(id)
	var vals map[string]any
	json.Unmarshal(st.Values, &vals)
	if vals["draft"] != "by hand" || !slices.Equal(st.Next, []string{"publish"}) || res.Checkpoint.CheckpointID == nil || *res.Checkpoint.CheckpointID != *st.Checkpoint.CheckpointID {
		t.Fatalf("after the update the state is %s next %v at %v (answered %v)", st.Values, st.Next, st.Checkpoint.CheckpointID, res.Checkpoint.CheckpointID)
	}
	var hist []struct {
		Metadata map[string]any `json:"metadata"`
	}
	s.must(200, "POST", "/threads/"+id+"/history", map[string]any{"limit": 1}, &hist)
	if len(hist) != 1 || hist[0].Metadata["source"] != "update" {
		t.Fatalf("the newest history entry is %v, want source update", hist)
	}
	s.must(400, "POST", "/threads/"+id+"/state", map[string]any{"values": map[string]any{"draft": "x"}, "as_node": "nope"}, nil)

	refund := s.newThread()
	s.must(200, "POST", "/threads/"+refund+"/runs/wait", map[string]any{"input": map[string]any{"amount": 3}, "assistant_id": "refund"}, nil)
	before := s.state(refund)
	s.must(409, "POST", "/threads/"+refund+"/state", map[string]any{"values": map[string]any{"amount": 1}}, nil)
	if after := s.state(refund); *after.Checkpoint.CheckpointID != *before.Checkpoint.CheckpointID || string(after.Values) != string(before.Values) {
		t.Fatal("the refused update changed the thread")
	}
}

func TestACopyHasTheValuesHistoryAndMetadataAndGoesItsOwnWay(t *testing.T) {
	s := newLGServer(t)
	var th threadObj
	s.must(200, "POST", "/threads", map[string]any{"metadata": map[string]any{"owner": "ana"}}, &th)
	id := th.ThreadID
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 5}, "assistant_id": "refund"}, nil)
	var cp threadObj
	s.must(200, "POST", "/threads/"+id+"/copy", nil, &cp)
	if cp.ThreadID == id || cp.Status != "interrupted" || cp.Metadata["owner"] != "ana" || cp.Metadata["graph_id"] != "refund" || cp.Values["amount"] != 5.0 || len(cp.Interrupts) != 1 {
		t.Fatalf("the copy reads %+v", cp)
	}
	var h1, h2 []stateObj
	s.must(200, "POST", "/threads/"+id+"/history", map[string]any{"limit": 10}, &h1)
	s.must(200, "POST", "/threads/"+cp.ThreadID+"/history", map[string]any{"limit": 10}, &h2)
	// The copy asked its question again (its node ran again, as on a fork):
	// states on top of the original's.
	if len(h1) == 0 || len(h2) <= len(h1) || len(h2[0].Tasks) != 1 || len(h2[0].Tasks[0].Interrupts) != 1 {
		t.Fatalf("the copy's history has %d states, the original's %d", len(h2), len(h1))
	}
	h2 = h2[len(h2)-len(h1):]
	for i := range h1 {
		if string(h1[i].Values) != string(h2[i].Values) || !slices.Equal(h1[i].Next, h2[i].Next) {
			t.Fatalf("history state %d differs: %s vs %s", i, h1[i].Values, h2[i].Values)
		}
	}
	var out map[string]any
	s.must(200, "POST", "/threads/"+cp.ThreadID+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}, &out)
	if out["__interrupt__"] != nil {
		t.Fatalf("resuming the copy answered %v", out)
	}
	s.must(200, "GET", "/threads/"+id, nil, &th)
	if th.Status != "interrupted" {
		t.Fatalf("resuming the copy moved the original to %s", th.Status)
	}
	s.must(404, "POST", "/threads/nope/copy", nil, nil)
	// A thread created empty copies as one.
	empty := s.newThread()
	s.must(200, "POST", "/threads/"+empty+"/copy", nil, &cp)
	if cp.ThreadID == empty || cp.Status != "idle" {
		t.Fatalf("the copy of an empty thread reads %+v", cp)
	}
}

func TestARollbackUndoesTheRunningRun(t *testing.T) {
	s := newLGServer(t)
	var th threadObj
	s.must(200, "POST", "/threads", map[string]any{"metadata": map[string]any{"owner": "ana"}}, &th)
	id := th.ThreadID
	first := s.startGate(id, map[string]any{"assistant_id": "bumpgate"}) // bump committed n=1, wait blocks
	var run map[string]any
	s.must(200, "POST", "/threads/"+id+"/runs", map[string]any{"input": map[string]any{}, "assistant_id": "bumpgate", "multitask_strategy": "rollback"}, &run)
	<-s.in
	close(s.gate)
	var out map[string]any
	s.must(200, "GET", "/threads/"+id+"/runs/"+run["run_id"].(string)+"/join", nil, &out)
	if out["n"] != 2.0 {
		t.Fatalf("the run after the rollback ended with n=%v, want 2 (1 without the rolled-back run's bump)", out["n"])
	}
	s.must(404, "GET", "/threads/"+id+"/runs/"+first["run_id"].(string), nil, nil)
	s.must(200, "GET", "/threads/"+id, nil, &th)
	if th.Metadata["owner"] != "ana" {
		t.Fatalf("the rollback lost the thread's metadata: %v", th.Metadata)
	}
}

// sqliteServer serves the refund graph over the SQLite file at path.
func sqliteServer(t *testing.T, path string) (*lgServer, func()) {
	t.Helper()
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := refundServer(t, st)
	hs := httptest.NewServer(srv)
	stop := func() {
		hs.Close()
		srv.Close()
		st.Close()
	}
	return &lgServer{t: t, url: hs.URL}, stop
}

func TestThreadMetadataAndRunsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	s, stop := sqliteServer(t, path)
	var th threadObj
	s.must(200, "POST", "/threads", map[string]any{"metadata": map[string]any{"owner": "ana"}}, &th)
	id := th.ThreadID
	s.must(200, "PATCH", "/threads/"+id, map[string]any{"metadata": map[string]any{"team": "billing"}}, nil)
	empty := s.newThread()
	s.must(200, "PATCH", "/threads/"+empty, map[string]any{"metadata": map[string]any{"draft": true}}, nil)
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 5}, "assistant_id": "refund"}, nil)
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}, nil)
	var before, runsBefore, emptyBefore json.RawMessage
	s.must(200, "GET", "/threads/"+id, nil, &before)
	s.must(200, "GET", "/threads/"+id+"/runs", nil, &runsBefore)
	s.must(200, "GET", "/threads/"+empty, nil, &emptyBefore)
	stop()

	s, stop = sqliteServer(t, path)
	defer stop()
	var after, runsAfter, emptyAfter json.RawMessage
	s.must(200, "GET", "/threads/"+id, nil, &after)
	s.must(200, "GET", "/threads/"+id+"/runs", nil, &runsAfter)
	s.must(200, "GET", "/threads/"+empty, nil, &emptyAfter)
	if string(after) != string(before) || string(emptyAfter) != string(emptyBefore) {
		t.Fatalf("after a restart the threads read\n%s\n%s\nwant\n%s\n%s", after, emptyAfter, before, emptyBefore)
	}
	if !sameJSONValue(runsAfter, runsBefore) {
		t.Fatalf("after a restart the runs read\n%s\nwant\n%s", runsAfter, runsBefore)
	}
	var runs []map[string]any
	json.Unmarshal(runsAfter, &runs)
	if len(runs) != 2 || runs[0]["status"] != "success" {
		t.Fatalf("the runs are %v, want two that succeeded", runs)
	}
	var th2 threadObj
	json.Unmarshal(after, &th2)
	if th2.Metadata["owner"] != "ana" || th2.Metadata["team"] != "billing" {
		t.Fatalf("the metadata after a restart is %v", th2.Metadata)
	}
	var out map[string]any
	s.must(200, "GET", "/threads/"+id+"/runs/"+runs[0]["run_id"].(string)+"/join", nil, &out)
	if out["outcome"] == nil {
		t.Fatalf("joining a run of the previous process answered %v, want its output", out)
	}
	var found []threadObj
	s.must(200, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"draft": true}}, &found)
	if len(found) != 1 || found[0].ThreadID != empty {
		t.Fatalf("searching the metadata after a restart found %v", found)
	}
}

// sameJSONValue reports whether a and b encode the same value, whatever the
// order of their keys.
func sameJSONValue(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func TestAThreadsMetadataIsBoundedAndARefusalChangesNothing(t *testing.T) {
	big := strings.Repeat("x", 10000)
	for _, c := range []struct {
		name string
		open func(t *testing.T) (*lgServer, func())
	}{
		{"memory", func(t *testing.T) (*lgServer, func()) { return newLGServer(t), func() {} }},
		{"sqlite", func(t *testing.T) (*lgServer, func()) {
			return sqliteServer(t, filepath.Join(t.TempDir(), "threads.db"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, stop := c.open(t)
			defer stop()
			const id = "5b0f3a52-3c4e-4f5a-9d7e-0c1b2a3d4e5f"
			r := s.must(413, "POST", "/threads", map[string]any{"thread_id": id, "metadata": map[string]any{"a": big, "b": big}}, nil)
			if !strings.Contains(string(r.body), `"code":"too_large"`) || !strings.Contains(string(r.body), "keep large data in the thread's values") {
				t.Fatalf("the refusal reads %s", r.body)
			}
			s.must(404, "GET", "/threads/"+id, nil, nil)

			s.must(200, "POST", "/threads", map[string]any{"thread_id": id, "metadata": map[string]any{"a": big}}, nil)
			r = s.must(413, "PATCH", "/threads/"+id, map[string]any{"metadata": map[string]any{"b": big}}, nil)
			if !strings.Contains(string(r.body), `"code":"too_large"`) {
				t.Fatalf("the refusal reads %s", r.body)
			}
			var th threadObj
			s.must(200, "GET", "/threads/"+id, nil, &th)
			if _, ok := th.Metadata["b"]; ok || th.Metadata["a"] != big {
				t.Fatalf("after a refused update the metadata has keys %v", slices.Sorted(maps.Keys(th.Metadata)))
			}
			s.must(200, "PATCH", "/threads/"+id, map[string]any{"metadata": map[string]any{"a": "small", "b": big}}, nil)
		})
	}
}

// TestAThreadKeepsTheCreatedAtPOSTThreadsGaveIt checks that a thread's
// created_at stays what POST /threads answered once it has run, read alone
// or in a search, whatever body created it.
func TestAThreadKeepsTheCreatedAtPOSTThreadsGaveIt(t *testing.T) {
	s := newLGServer(t)
	for _, body := range []map[string]any{{"metadata": map[string]any{}}, {}, {"metadata": map[string]any{"team": "billing"}}} {
		var made struct {
			ThreadID  string `json:"thread_id"`
			CreatedAt string `json:"created_at"`
		}
		s.must(200, "POST", "/threads", body, &made)
		s.must(200, "POST", "/threads/"+made.ThreadID+"/runs/wait", map[string]any{"input": map[string]any{"amount": 3}, "assistant_id": "refund"}, nil)
		var got struct {
			CreatedAt string `json:"created_at"`
			UpdatedAt string `json:"updated_at"`
		}
		s.must(200, "GET", "/threads/"+made.ThreadID, nil, &got)
		if got.CreatedAt != made.CreatedAt {
			t.Fatalf("a thread created with %v at %s reads created_at %s (updated_at %s) after its first run", body, made.CreatedAt, got.CreatedAt, got.UpdatedAt)
		}
		var found []struct {
			CreatedAt string `json:"created_at"`
		}
		s.must(200, "POST", "/threads/search", map[string]any{"ids": []string{made.ThreadID}}, &found)
		if len(found) != 1 || found[0].CreatedAt != made.CreatedAt {
			t.Fatalf("the search finds the thread created with %v as %+v, want created_at %s", body, found, made.CreatedAt)
		}
	}
}
