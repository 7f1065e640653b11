package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/server"
)

type ttlState struct {
	Hold    bool   `json:"hold,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

// ttlGraph asks one question that stays open for an hour, by clock. Once it is
// answered, a thread whose input says hold waits for held to close.
func ttlGraph(clock func() time.Time, held ...chan struct{}) builder {
	return func(opts ...graph.Option) (graph.Erased, error) {
		g := graph.New[ttlState]()
		g.AddNode("ask", func(ctx context.Context, s ttlState) (ttlState, error) {
			ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Still wanted?", TTL: time.Hour})
			if err != nil {
				return ttlState{}, err
			}
			if s.Hold {
				<-held[0]
			}
			if ans.Cancelled {
				return ttlState{Outcome: "closed by " + ans.By}, nil
			}
			return ttlState{Outcome: "answered"}, nil
		})
		g.AddEdge(graph.Start, "ask")
		app, err := g.Compile(append(opts, graph.WithName("ttl"), graph.WithClock(clock))...)
		if err != nil {
			return nil, err
		}
		return app.Erase(), nil
	}
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestAQuestionPastItsTTLIsClosedAsExpiredWithoutAnyone(t *testing.T) {
	clock := testclock.New(t0)
	e := newEnv(t, setup{graphs: []builder{ttlGraph(clock.Now)},
		opts: []server.Option{server.WithClock(clock.Now), server.WithExpiryWatch(5 * time.Millisecond)}})
	res := e.start("ttl", "q", `{}`)
	qs := res["interrupts"].([]any)
	if got := qs[0].(map[string]any)["expires_at"]; got != t0.Add(time.Hour).Format(time.RFC3339) {
		t.Fatalf("expires_at = %v, want %s", got, t0.Add(time.Hour).Format(time.RFC3339))
	}
	sub, err := e.client().Subscribe(context.Background(), "q", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	clock.Set(t0.Add(time.Hour))
	evs := until(t, sub)
	var end struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(evs[len(evs)-1].Data, &end); err != nil || end.Status != "completed" {
		t.Fatalf("end event %s (%v), want completed", evs[len(evs)-1].Data, err)
	}
	state := e.do(http.MethodGet, "/v1/threads/q", "", admin.Secret).json(t)
	if out := state["values"].(map[string]any)["outcome"]; out != "closed by "+server.ExpiryActor {
		t.Fatalf("outcome = %v, want the question closed by %s", out, server.ExpiryActor)
	}
	history := string(e.do(http.MethodGet, "/v1/threads/q/history", "", admin.Secret).body)
	if !strings.Contains(history, `"status":"expired"`) || !strings.Contains(history, `"by":"`+server.ExpiryActor+`"`) {
		t.Fatalf("the history does not record the expiry and who gave it: %s", history)
	}
	late := e.post("/v1/threads/q/resume", `{"response":{"ok":true}}`, admin.Secret)
	expect(t, late, 409, "not_interrupted")
}

func TestExpireQuestionsClosesOnlyQuestionsWhoseTimeHasCome(t *testing.T) {
	clock := testclock.New(t0)
	e := newEnv(t, setup{graphs: []builder{ttlGraph(clock.Now)},
		opts: []server.Option{server.WithClock(clock.Now), server.WithExpiryWatch(0)}})
	ctx := context.Background()
	e.start("ttl", "early", `{}`)
	clock.Set(t0.Add(30 * time.Minute))
	e.start("ttl", "late", `{}`)
	e.start("refund", "no-ttl", `{"amount":5}`)
	for _, c := range []struct {
		at     time.Duration
		closed int
	}{{59 * time.Minute, 0}, {time.Hour, 1}, {time.Hour, 0}, {90 * time.Minute, 1}, {100 * time.Hour, 0}} {
		clock.Set(t0.Add(c.at))
		n, err := e.srv.Host().ExpireQuestions(ctx)
		if err != nil || n != c.closed {
			t.Fatalf("at +%s: closed %d (%v), want %d", c.at, n, err, c.closed)
		}
	}
	if got := e.do(http.MethodGet, "/v1/threads/no-ttl", "", admin.Secret).json(t)["status"]; got != "interrupted" {
		t.Fatalf("a question without a TTL was closed: status %v", got)
	}
}

func TestMetricsCountQuestionsClosedAsExpired(t *testing.T) {
	clock := testclock.New(t0)
	e := newEnv(t, setup{graphs: []builder{ttlGraph(clock.Now)},
		opts: []server.Option{server.WithClock(clock.Now), server.WithExpiryWatch(0)}})
	closeOneCounted(t, e, clock, "ttl")
}

func TestAnExpiryWhoseThreadThenFailsIsCountedAsClosed(t *testing.T) {
	clock := testclock.New(t0)
	failing := func(opts ...graph.Option) (graph.Erased, error) {
		g := graph.New[ttlState]()
		g.AddNode("ask", func(ctx context.Context, s ttlState) (ttlState, error) {
			ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Still wanted?", TTL: time.Minute})
			if err != nil {
				return ttlState{}, err
			}
			if ans.Expired {
				return ttlState{}, errors.New("nobody answered in time")
			}
			return ttlState{}, nil
		})
		g.AddEdge(graph.Start, "ask")
		app, err := g.Compile(append(opts, graph.WithName("strict"), graph.WithClock(clock.Now))...)
		if err != nil {
			return nil, err
		}
		return app.Erase(), nil
	}
	e := newEnv(t, setup{graphs: []builder{failing},
		opts: []server.Option{server.WithClock(clock.Now), server.WithExpiryWatch(0)}})
	closeOneCounted(t, e, clock, "strict")
}

// closeOneCounted starts a thread of graphName, lets its question expire, and
// checks that ExpireQuestions closes it and /metrics counts it.
func closeOneCounted(t *testing.T, e *env, clock *testclock.Clock, graphName string) {
	t.Helper()
	e.start(graphName, "q", `{}`)
	clock.Set(t0.Add(time.Hour))
	if n, err := e.srv.Host().ExpireQuestions(context.Background()); err != nil || n != 1 {
		t.Fatalf("closed %d (%v), want 1", n, err)
	}
	metrics := string(e.do(http.MethodGet, "/metrics", "", admin.Secret).body)
	if want := `interlude_resolutions_total{graph="` + graphName + `",kind="expired"} 1`; !strings.Contains(metrics, want) {
		t.Fatalf("/metrics lacks %s:\n%s", want, metrics)
	}
}
func TestThreadsOfGraphsNotHostedDoNotKeepExpiriesFromBeingClosed(t *testing.T) {
	clock := testclock.New(t0)
	e := newEnv(t, setup{graphs: []builder{ttlGraph(clock.Now)},
		opts: []server.Option{server.WithClock(clock.Now), server.WithExpiryWatch(0)}})
	// Threads of a graph that another server hosts, all due before this one's.
	other := graph.New[ttlState]()
	other.AddNode("ask", func(ctx context.Context, s ttlState) (ttlState, error) {
		_, err := interlude.Interrupt(ctx, interlude.Request{Message: "Elsewhere?", TTL: time.Minute})
		return ttlState{}, err
	})
	other.AddEdge(graph.Start, "ask")
	app, err := other.Compile(graph.WithName("elsewhere"), graph.WithStore(e.st), graph.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 150 {
		if _, err := app.Invoke(ctx, fmt.Sprintf("elsewhere-%03d", i), graph.Input(ttlState{})); err != nil {
			t.Fatal(err)
		}
	}
	e.start("ttl", "mine", `{}`)
	clock.Set(t0.Add(time.Hour))
	if n, err := e.srv.Host().ExpireQuestions(ctx); err != nil || n != 1 {
		t.Fatalf("closed %d (%v), want this server's 1 question", n, err)
	}
}

func TestASlowRunDoesNotHoldUpTheClosingOfOtherExpiredQuestions(t *testing.T) {
	clock := testclock.New(t0)
	held := make(chan struct{})
	e := newEnv(t, setup{graphs: []builder{ttlGraph(clock.Now, held)},
		opts: []server.Option{server.WithClock(clock.Now), server.WithExpiryWatch(0)}})
	e.start("ttl", "slow", `{"hold":true}`)
	clock.Set(t0.Add(time.Second))
	e.start("ttl", "quick", `{}`)
	sub, err := e.client().Subscribe(context.Background(), "quick", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	clock.Set(t0.Add(2 * time.Hour))
	done := make(chan int)
	go func() {
		n, _ := e.srv.Host().ExpireQuestions(context.Background())
		done <- n
	}()
	until(t, sub) // the quick thread ends while the slow one, listed first, still runs
	close(held)
	if n := <-done; n != 2 {
		t.Fatalf("closed %d questions, want 2", n)
	}
}
