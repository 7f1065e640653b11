package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude/examples/graphs"
)

func TestRefundPausesWithTheInterruptShapeThenApprovedEndsRefundedAfterTwoAttempts(t *testing.T) {
	e := newEnv(t, setup{})
	res := e.start("refund", "order-42", `{"amount":150}`)
	if res["status"] != "interrupted" || res["thread_id"] != "order-42" {
		t.Fatalf("answer %v", res)
	}
	sameJSON(t, "values", res["values"], `{"amount":150,"attempts":1}`)
	ints := res["interrupts"].([]any)
	if len(ints) != 1 {
		t.Fatalf("interrupts %v", ints)
	}
	q := ints[0].(map[string]any)
	id, _ := q["id"].(string)
	if !strings.HasPrefix(id, "int_") {
		t.Fatalf("interrupt id %q", id)
	}
	if _, err := time.Parse(time.RFC3339Nano, q["created_at"].(string)); err != nil {
		t.Fatalf("created_at: %v", err)
	}
	delete(q, "id")
	delete(q, "created_at")
	sameJSON(t, "interrupt", q, `{"name":null,"node":"refund","path":["refund"],"tool_call_id":null,"message":"Approve a refund of $150?",
		"reason":"tool_approval","value":{"amount":150},"response_schema":`+graphs.ApprovalSchema+`,"expires_at":null}`)

	a := e.post("/v1/graph/invoke", `{"resume":{"approved":true},"config":{"thread_id":"order-42"}}`, admin.Secret)
	expect(t, a, 200, "")
	m := a.json(t)
	if m["status"] != "completed" || len(m["interrupts"].([]any)) != 0 {
		t.Fatalf("answer %s", a.body)
	}
	sameJSON(t, "values", m["values"], `{"amount":150,"attempts":2,"outcome":"refunded"}`)
}

func TestRefundAtFullGranularityCarriesTheSeedsExecutionMeta(t *testing.T) {
	e := newEnv(t, setup{})
	a := e.post("/v1/graph/invoke", `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"r1"},"response_granularity":"full"}`)
	expect(t, a, 200, "")
	m := a.json(t)
	st := m["state"].(map[string]any)
	meta := st["execution_meta"].(map[string]any)
	if meta["status"] != "interrupted_before" || meta["interrupt_reason"] != "tool_approval" || meta["interrupted_node"] != "refund" {
		t.Fatalf("execution_meta %v", meta)
	}
	in := meta["interrupt_data"].(map[string]any)["interrupt"].(map[string]any)
	sameJSON(t, "interrupt_data.interrupt", in, m["interrupts"].([]any)[0])
	for _, k := range []string{"id", "node", "message", "reason", "value", "response_schema", "tool_call_id"} {
		if _, ok := in[k]; !ok {
			t.Errorf("interrupt_data.interrupt lacks %q", k)
		}
	}
	sameJSON(t, "state.values", st["values"], m["values"])
	sameJSON(t, "state.next", st["next"], `["refund"]`)

	low := e.post("/v1/graph/invoke", `{"resume":{"approved":false},"config":{"thread_id":"r1"},"response_granularity":"low"}`)
	expect(t, low, 200, "")
	lm := low.json(t)
	if _, ok := lm["values"]; ok {
		t.Fatalf("low granularity has values: %s", low.body)
	}
	if lm["status"] != "completed" {
		t.Fatalf("%s", low.body)
	}
	full := e.do(http.MethodGet, "/v1/threads/r1", "", "")
	sameJSON(t, "values", full.json(t)["values"], `{"amount":150,"attempts":2,"outcome":"declined"}`)
}

func TestTwoStepAnsweredTrueTwiceIsDoneWithBothAnswers(t *testing.T) {
	e := newEnv(t, setup{})
	res := e.start("two-step", "ts", `{}`)
	if res["interrupts"].([]any)[0].(map[string]any)["message"] != "Approve step 1?" {
		t.Fatalf("%v", res)
	}
	a := e.post("/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"ts"}}`)
	expect(t, a, 200, "")
	m := a.json(t)
	if m["status"] != "interrupted" || m["interrupts"].([]any)[0].(map[string]any)["message"] != "Approve step 2?" {
		t.Fatalf("%s", a.body)
	}
	a = e.post("/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"ts"}}`)
	expect(t, a, 200, "")
	m = a.json(t)
	if m["status"] != "completed" {
		t.Fatalf("%s", a.body)
	}
	sameJSON(t, "values", m["values"], `{"answers":[true,true],"outcome":"done"}`)
}

func TestTwoStepAnsweredFalseFirstStops(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("two-step", "ts", `{}`)
	a := e.post("/v1/graph/invoke", `{"resume":false,"config":{"thread_id":"ts"}}`)
	expect(t, a, 200, "")
	m := a.json(t)
	if m["status"] != "completed" {
		t.Fatalf("%s", a.body)
	}
	sameJSON(t, "values", m["values"], `{"answers":[false],"outcome":"stopped"}`)
}

func TestParallelRefusesABareResumeThenAnsweredAThenBRunsCOnce(t *testing.T) {
	e := newEnv(t, setup{})
	res := e.start("parallel", "p", `{}`)
	ints := res["interrupts"].([]any)
	if len(ints) != 2 {
		t.Fatalf("%v", res)
	}
	ids := map[string]string{}
	for _, x := range ints {
		q := x.(map[string]any)
		ids[q["node"].(string)] = q["id"].(string)
	}
	e.unchanged("p", func() {
		a := e.post("/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"p"}}`)
		expect(t, a, http.StatusConflict, "ambiguous_resume")
		sameJSON(t, "details", a.json(t)["error"].(map[string]any)["details"].(map[string]any)["interrupts"], []string{ids["a"], ids["b"]})
	})
	a := e.post("/v1/graph/invoke", `{"responses":[{"interrupt_id":"`+ids["a"]+`","status":"resolved","response":true}],"config":{"thread_id":"p"}}`)
	expect(t, a, 200, "")
	m := a.json(t)
	if m["status"] != "interrupted" || len(m["interrupts"].([]any)) != 1 {
		t.Fatalf("after a: %s", a.body)
	}
	a = e.post("/v1/threads/p/resume", `{"interrupt_id":"`+ids["b"]+`","response":true}`)
	expect(t, a, 200, "")
	m = a.json(t)
	if m["status"] != "completed" {
		t.Fatalf("after b: %s", a.body)
	}
	sameJSON(t, "values", m["values"], `{"approved":["a","b"],"c_runs":1,"outcome":["a","b"]}`)
}

func TestGatedRefusesResumeAndContinuesOnEmptyBodiesToPublished(t *testing.T) {
	e := newEnv(t, setup{})
	res := e.start("gated", "g", `{"topic":"otters"}`)
	if res["status"] != "interrupted" || len(res["interrupts"].([]any)) != 0 {
		t.Fatalf("%v", res)
	}
	sameJSON(t, "breakpoint", res["breakpoint"], `{"node":"draft","when":"after"}`)
	e.unchanged("g", func() {
		expect(t, e.post("/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"g"}}`), http.StatusConflict, "not_interrupted")
		expect(t, e.post("/v1/threads/g/resume", `{"response":true}`), http.StatusConflict, "not_interrupted")
		expect(t, e.post("/v1/graph/invoke", `{"input":{"topic":"x"},"config":{"thread_id":"g"}}`), http.StatusConflict, "thread_interrupted")
	})
	a := e.post("/v1/graph/invoke", `{"config":{"thread_id":"g"},"response_granularity":"full"}`)
	expect(t, a, 200, "")
	m := a.json(t)
	sameJSON(t, "breakpoint", m["breakpoint"], `{"node":"publish","when":"before"}`)
	meta := m["state"].(map[string]any)["execution_meta"].(map[string]any)
	if meta["status"] != "interrupted_before" || meta["interrupted_node"] != "publish" || meta["interrupt_reason"] != "interrupt" {
		t.Fatalf("execution_meta %v", meta)
	}
	a = e.post("/v1/graph/invoke", `{"config":{"thread_id":"g"}}`)
	expect(t, a, 200, "")
	m = a.json(t)
	if m["status"] != "completed" {
		t.Fatalf("%s", a.body)
	}
	sameJSON(t, "values", m["values"], `{"topic":"otters","draft":"A short note about otters.","reviewed":true,"published":true}`)
}
