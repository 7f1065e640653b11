package termform_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/termform"
)

// ask asks q with the scripted input and returns the resolution and what was
// printed.
func ask(t *testing.T, q interlude.Interruption, input string) (interlude.Resolution, string, error) {
	t.Helper()
	var out strings.Builder
	res, err := termform.New(strings.NewReader(input), &out).Ask(q)
	if err == nil {
		if cerr := q.Check(res); cerr != nil {
			t.Fatalf("the form returned an answer its question refuses: %v\n%s", cerr, out.String())
		}
	}
	return res, out.String(), err
}

func question(schema string) interlude.Interruption {
	q := interlude.Interruption{ID: "int_1", Node: "n", Message: "Interruption?", Reason: interlude.ReasonInputRequired}
	if schema != "" {
		q.Schema = json.RawMessage(schema)
	}
	return q
}

func wantAnswer(t *testing.T, res interlude.Resolution, out string, want string) {
	t.Helper()
	if res.Status != interlude.Resolved {
		t.Fatalf("kind %q, want resolved\n%s", res.Status, out)
	}
	var got, exp any
	if err := json.Unmarshal(res.Response, &got); err != nil {
		t.Fatalf("answer %s: %v", res.Response, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	e, _ := json.Marshal(exp)
	if string(g) != string(e) {
		t.Fatalf("answer %s, want %s\n--- output ---\n%s", res.Response, want, out)
	}
}

// wantOutput fails the test for each of wants that out lacks, and shows out once
// if the test has failed.
func wantOutput(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestBooleanIsYesNoAskedAgainUntilValid(t *testing.T) {
	res, out, err := ask(t, question(`{"type":"boolean"}`), "maybe\n\ny\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `true`)
	if strings.Count(out, "answer* (yes/no): ") != 3 || strings.Count(out, "! answer yes or no") != 2 {
		t.Fatalf("output:\n%s", out)
	}
	res, out, _ = ask(t, question(`{"type":"boolean"}`), "No\n")
	wantAnswer(t, res, out, `false`)
}

func TestRefundApprovalSchemaIsAFormWithARequiredBoolean(t *testing.T) {
	q := question(graphs.ApprovalSchema)
	q.Message, q.Reason, q.Value = "Approve a refund of $150?", interlude.ReasonToolApproval, json.RawMessage(`{"amount":150}`)
	res, out, err := ask(t, q, "yes\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `{"approved":true}`)
	wantOutput(t, out, "? Approve a refund of $150?", `about: {"amount":150}`, "approved* (yes/no): ", `-> answered {"approved":true}`)
}

func TestEnumIsANumberedChoice(t *testing.T) {
	s := `{"enum":["red","green","blue"],"default":"green","description":"Pick a colour"}`
	res, out, err := ask(t, question(s), "7\nblue\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `"blue"`)
	wantOutput(t, out, "Pick a colour", "1) red", "2) green  (default)", "3) blue", "(1-3) [2]: ", "! choose one of 1-3")
	res, out, _ = ask(t, question(s), "\n")
	wantAnswer(t, res, out, `"green"`)
	res, out, _ = ask(t, question(s), "1\n")
	wantAnswer(t, res, out, `"red"`)
}

const shipping = `{
	"type": "object",
	"description": "Where to send the parcel",
	"properties": {
		"name":     {"type": "string", "description": "Who receives it", "minLength": 2},
		"weight":   {"type": "number", "exclusiveMinimum": 0, "maximum": 30},
		"parcels":  {"type": "integer", "minimum": 1, "default": 1},
		"express":  {"type": "boolean", "default": false},
		"speed":    {"enum": ["slow", "fast"]},
		"tags":     {"type": "array", "items": {"type": "string"}},
		"address":  {
			"type": "object",
			"description": "Street address",
			"properties": {
				"street": {"type": "string"},
				"zip":    {"type": "string", "pattern": "^[0-9]{5}$"}
			},
			"required": ["street", "zip"]
		},
		"note":     {"type": "string"},
		"kind":     {"const": "parcel"}
	},
	"required": ["name", "weight", "address"]
}`

func TestObjectAsksEachFieldInOrderWithLimitsDefaultsAndRetries(t *testing.T) {
	input := strings.Join([]string{
		"",        // name required: asked again
		"A",       // too short: asked again
		"Ada",     // ok
		"heavy",   // not a number
		"31",      // over the maximum
		"2.5",     // ok
		"1.5",     // parcels: not a whole number
		"",        // parcels: default 1
		"",        // express: default no
		"2",       // speed: fast
		"a, b ,c", // tags
		"1 Main St",
		"12",    // zip: pattern
		"12345", // ok
		"",      // note: optional, left out
	}, "\n") + "\n"
	res, out, err := ask(t, question(shipping), input)
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `{"name":"Ada","weight":2.5,"parcels":1,"express":false,"speed":"fast","tags":["a","b","c"],
		"address":{"street":"1 Main St","zip":"12345"},"kind":"parcel"}`)
	if !strings.HasPrefix(string(res.Response), `{"name":"Ada","weight":2.5,"parcels":1`) {
		t.Errorf("fields are not in the schema's order: %s", res.Response)
	}
	wantOutput(t, out,
		"Where to send the parcel",
		"Who receives it",
		"name* (text, at least 2 characters): ",
		"! a value is required",
		"weight* (number, > 0, <= 30): ",
		`! "heavy" is not a number`,
		"! must be <= 30",
		"parcels (whole number, >= 1) [1]: ",
		`! "1.5" is not a whole number`,
		"express (y/N): ",
		"tags (list of texts, comma-separated): ",
		"address*  (Street address):",
		"    street* (text): ",
		"    zip* (text, matching ^[0-9]{5}$): ",
		"kind: \"parcel\" (fixed)",
	)
}

func TestOptionalGroupCanBeLeftOut(t *testing.T) {
	s := `{"type":"object","properties":{"a":{"type":"string"},"sub":{"type":"object","properties":{"x":{"type":"integer"}}}}}`
	res, out, err := ask(t, question(s), "hi\nn\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `{"a":"hi"}`)
	res, out, _ = ask(t, question(s), "\ny\n7\n")
	wantAnswer(t, res, out, `{"sub":{"x":7}}`)
}

func TestBackslashTypesALiteralLine(t *testing.T) {
	s := `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}`
	res, out, err := ask(t, question(s), "\\\n\\!cancel\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `{"a":"","b":"!cancel"}`)
}

func TestLocalRefsAreFollowed(t *testing.T) {
	s := `{"$defs":{"yn":{"type":"boolean","description":"Say yes or no"}},"type":"object","properties":{"ok":{"$ref":"#/$defs/yn"}},"required":["ok"]}`
	res, out, err := ask(t, question(s), "y\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `{"ok":true}`)
	if !strings.Contains(out, "Say yes or no") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestRootLevelRulesAreCheckedAtTheEndAndTheFormAskedAgain(t *testing.T) {
	// Either a or b must be given; each alone is optional.
	s := `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`
	res, out, err := ask(t, question(s), "\n\n\nb-value\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `{"b":"b-value"}`)
	if !strings.Contains(out, "does not match the question's schema") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestNoSchemaIsAFreeJSONLine(t *testing.T) {
	res, out, err := ask(t, question(""), "not json\n{\"a\": [1, 2]}\n")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, `{"a":[1,2]}`)
	if !strings.Contains(out, "answer* (JSON): ") || !strings.Contains(out, "that is not JSON") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestCommandsCancelAndRejectFromAnyPrompt(t *testing.T) {
	res, out, err := ask(t, question(shipping), "Ada\n!cancel\n")
	if err != nil || res.Status != interlude.Cancelled {
		t.Fatalf("%v %+v\n%s", err, res, out)
	}
	res, out, err = ask(t, question(shipping), "!reject  Not our customer \n")
	if err != nil || res.Status != interlude.Rejected || res.Error == nil || res.Error.Message != "Not our customer" {
		t.Fatalf("%v %+v\n%s", err, res, out)
	}
	if !strings.Contains(out, "-> rejected: Not our customer") {
		t.Fatalf("output:\n%s", out)
	}
	res, _, err = ask(t, question(`{"type":"boolean"}`), "!reject\n")
	if err != nil || res.Status != interlude.Rejected || res.Error != nil {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestHelpShowsDescriptionLimitsAndCommands(t *testing.T) {
	_, out, err := ask(t, question(shipping), "?\nAda\n")
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err %v", err)
	}
	wantOutput(t, out, "must be at least 2 characters", "!cancel withdraws the question")
}

func TestEndOfInputLeavesTheQuestionUnanswered(t *testing.T) {
	for _, input := range []string{"", "Ada\n2\n"} {
		_, _, err := ask(t, question(shipping), input)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("input %q: err %v, want io.EOF", input, err)
		}
	}
	// A last line without a newline still counts.
	res, out, err := ask(t, question(`{"type":"boolean"}`), "yes")
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, res, out, "true")
}

func TestOneAskerAsksQuestionsInTurnFromOneStream(t *testing.T) {
	var out strings.Builder
	a := termform.New(strings.NewReader("y\nhello there\nn\n"), &out)
	r1, err1 := a.Ask(question(`{"type":"boolean"}`))
	line, err2 := a.Line("you> ")
	r2, err3 := a.Ask(question(`{"type":"boolean"}`))
	if err1 != nil || err2 != nil || err3 != nil || string(r1.Response) != "true" || line != "hello there" || string(r2.Response) != "false" {
		t.Fatalf("%v %v %v %s %q %s", err1, err2, err3, r1.Response, line, r2.Response)
	}
	if _, err := a.Line("you> "); !errors.Is(err, io.EOF) {
		t.Fatalf("Line at the end: %v", err)
	}
}

// supportQuestion starts the support agent and returns it with its approval
// question for issue_refund.
func supportQuestion(t *testing.T) (*agent.Agent, interlude.Interruption) {
	t.Helper()
	a, err := graphs.SupportAgent(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), "s", agent.Ask("Please refund order A-1001"))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	return a, res.Interrupts[0]
}

func TestToolApprovalIsAMenuOfDecisions(t *testing.T) {
	cases := []struct {
		name, input string
		want        interlude.Resolution
		final       string
	}{
		{"approve by number", "1\n", agent.Approve(), "Done: Refunded $150 on order A-1001."},
		{"approve by yes", "yes\n", agent.Approve(), "Done: Refunded $150 on order A-1001."},
		{"edit the amount", "edit\n\n0\n40\n\n", agent.Edit(json.RawMessage(`{"order_id":"A-1001","amount":40,"reason":"customer request"}`)), "Done: Refunded $40 on order A-1001."},
		{"reject with a reason", "rej\nNeeds a manager.\n", agent.Deny("Needs a manager."), "I could not issue the refund: Needs a manager."},
		{"reject by no, without a reason", "no\n\n", interlude.Resolve(agent.Decision{Action: agent.ActionReject}), "I could not issue the refund: The user did not approve this call to issue_refund, so it was not run."},
		{"respond", "r\n4\n\nAlready refunded.\n", agent.RespondWith("Already refunded."), "Done: Already refunded."},
		{"cancel", "cancel\n", interlude.Cancel(), "I could not issue the refund: The call to issue_refund was cancelled before it ran."},
		{"reject command", "!reject Not today\n", interlude.Reject(&interlude.RejectedError{Name: "Rejected", Message: "Not today"}), "I could not issue the refund: Not today"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, q := supportQuestion(t)
			res, out, err := ask(t, q, c.input)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !res.Same(c.want) {
				t.Fatalf("resolution %+v (%s), want %+v (%s)\n%s", res, res.Response, c.want, c.want.Response, out)
			}
			final, err := a.Invoke(context.Background(), "s", graph.Respond(map[string]interlude.Resolution{q.ID: res}))
			if err != nil || final.Status != interlude.RunCompleted {
				t.Fatalf("%v %+v", err, final)
			}
			if got := final.Values.Messages[len(final.Values.Messages)-1].Text(); got != c.final {
				t.Fatalf("final answer %q, want %q", got, c.final)
			}
		})
	}
}

func TestToolApprovalShowsTheCallAndTheMenu(t *testing.T) {
	_, q := supportQuestion(t)
	_, out, err := ask(t, q, "r\n2\n\n0\n")
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err %v", err)
	}
	wantOutput(t, out,
		"? Approve a refund of $150 for order A-1001?",
		"tool: issue_refund",
		`order_id: "A-1001"`,
		"amount: 150",
		"1) approve  run the call as it is",
		"5) cancel   withdraw the question",
		"! did you mean reject or respond?",
		"Edit the arguments",
		"The order number",
		"order_id* (text) [A-1001]: ",
		"amount* (number, > 0, <= 10000) [150]: ",
		"! must be > 0",
	)
}

func TestHostileQuestionTextIsShownEscaped(t *testing.T) {
	const esc = `\u001b]0;owned\u0007\u001b[2J\u009b\u202e`
	q := question(`{"type": "object", "description": "` + esc + `", "properties": {
		"pick` + esc + `": {"enum": ["a` + esc + `", "b"], "description": "` + esc + `"}},
		"required": ["pick` + esc + `"]}`)
	q.Message, q.Node, q.Reason = "\x1b[2J\x1b]0;t\x07", "n\x1b[2J", "r\u009b"
	q.Value = json.RawMessage(`{"note": "` + esc + `"}`)
	_, out, err := ask(t, q, "?\n2\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("the form printed %q:\n%s", bad, out)
		}
	}
	wantOutput(t, out, `\x1b[2J\x1b]0;t\x07`, `node n\x1b[2J`, `1) a\x1b]0;owned\x07\x1b[2J\u009b\u202e`)
}
