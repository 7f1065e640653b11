package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/memory"
)

func TestMetricsShowTimeToAnswerPendingQuestionsDeliveriesAndEscalations(t *testing.T) {
	st := memory.New()
	clock := testclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	g := graph.New[payout]()
	g.AddNode("pay", func(ctx context.Context, s payout) (payout, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Pay out?", Reason: "payout"})
		if err != nil {
			return s, err
		}
		return payout{Outcome: string(ans.Data)}, nil
	})
	g.AddEdge(graph.Start, "pay")
	app, err := g.Compile(graph.WithStore(st), graph.WithName("payout"), graph.WithOutbox(), graph.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer hook.Close()
	wh, err := notify.NewWebhook(notify.WebhookConfig{Name: "ops", URL: hook.URL, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan notify.Delivery, 100)
	d, err := notify.New(st, []notify.Destination{wh}, notify.WithPoll(time.Hour), notify.WithClock(clock.Now),
		notify.WithObserver(func(d notify.Delivery) { settled <- d }),
		notify.WithEscalations(notify.Escalation{After: 10 * time.Minute, Notify: []string{"olga"}}))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv, err := server.New(server.WithGraph(app.Erase()), server.WithNotifier(d), server.WithMetricsRegistry(reg), server.WithClock(clock.Now),
		server.WithExpiryWatch(time.Hour), server.WithRecoveryWatch(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer func() {
		srv.Close()
		hs.Close()
	}()
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	wait := func(n int) {
		t.Helper()
		for range n {
			select {
			case dl := <-settled:
				if dl.State != "delivered" {
					t.Fatalf("a delivery failed: %+v", dl)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("waited 10s for deliveries")
			}
		}
	}
	post("/v1/graph/invoke", `{"graph":"payout","config":{"thread_id":"a"},"input":{"amount":1}}`)
	post("/v1/graph/invoke", `{"graph":"payout","config":{"thread_id":"b"},"input":{"amount":2}}`)
	wait(2)
	clock.Set(clock.Now().Add(15 * time.Minute))
	if n, err := srv.Host().EscalateQuestions(context.Background()); err != nil || n != 2 {
		t.Fatalf("escalated %d, %v", n, err)
	}
	wait(2)
	post("/v1/threads/a/resume", `{"response":true}`)
	wait(1)

	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"interlude_question_answer_seconds", map[string]string{"graph": "payout", "reason": "payout"}, 1},
		{"interlude_questions_pending", map[string]string{"graph": "payout"}, 1},
		{"interlude_notification_deliveries_total", map[string]string{"destination": "ops", "outcome": "ok"}, 5},
		{"interlude_escalations_total", map[string]string{"graph": "payout", "reason": "payout"}, 2},
		{"interlude_notification_attempts_total", map[string]string{"outcome": "delivered"}, 5},
	} {
		got, ok := sample(families, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	h := families["interlude_question_answer_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleSum() != (15 * time.Minute).Seconds() {
		t.Errorf("time to answer: sum %v, want 900s", h.GetSampleSum())
	}
	if families["interlude_question_answer_seconds"].GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("interlude_question_answer_seconds is a %v", families["interlude_question_answer_seconds"].GetType())
	}
}
