package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/interludehq/interlude/server/auth"
)

var secondApprover = auth.Token{Name: "bob", Secret: "approve-secret-bob", Roles: []auth.Role{auth.RoleApprove}}

// An identical answer sent again is not applied again; whoever sends it is
// told so, and who answered first, so a second person knows they did not
// decide.
func TestAReplayedAnswerSaysWhoAnsweredFirst(t *testing.T) {
	e := newEnv(t, setup{tokens: []auth.Token{runner, approver, secondApprover, admin, reader}})
	ctx := context.Background()
	started := e.start("refund", "r", `{"amount":150}`)
	id := started["interrupts"].([]any)[0].(map[string]any)["id"].(string)
	body := `{"interrupt_id":"` + id + `","response":{"approved":true}}`

	first := e.post("/v1/threads/r/resume", body, approver.Secret)
	expect(t, first, http.StatusOK, "")
	if m := first.json(t); m["replayed"] != nil || m["replays"] != nil {
		t.Fatalf("the first answer reads as a replay: %s", first.body)
	}
	e.unchanged("r", func() {
		for _, tok := range []auth.Token{secondApprover, approver} {
			a := e.post("/v1/threads/r/resume", body, tok.Secret)
			expect(t, a, http.StatusOK, "")
			m := a.json(t)
			replays, _ := m["replays"].([]any)
			if m["replayed"] != true || len(replays) != 1 {
				t.Fatalf("%s's identical answer: %s; want replayed true with the first answer", tok.Name, a.body)
			}
			rp := replays[0].(map[string]any)
			if rp["interrupt_id"] != id || rp["by"] != approver.Name || rp["status"] != "resolved" || rp["at"] == nil {
				t.Fatalf("%s's identical answer names %v; want %s's resolution of %s", tok.Name, rp, approver.Name, id)
			}
		}
	})
	// The Go client reads it too.
	res, err := e.client(secondApprover).Resume(ctx, "r", id, map[string]any{"approved": true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Replayed || len(res.Replays) != 1 || res.Replays[0].By != approver.Name || res.Replays[0].InterruptID != id || res.Replays[0].At.IsZero() {
		t.Fatalf("client result %+v; want a replay answered by %s", res, approver.Name)
	}
}
