package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// tripSchema uses the keywords the answer form is built from.
const tripSchema = `{
	"type": "object",
	"properties": {
		"destination": {"type": "string", "title": "Destination", "description": "The city to travel to", "minLength": 2, "maxLength": 40, "pattern": "^[A-Z]"},
		"nights": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3, "description": "How many nights"},
		"class": {"enum": ["economy", "premium", "business"], "default": "economy"},
		"airport": {"enum": ["AMS", "CDG", "FRA", "LHR", "MAD", "ZRH"]},
		"insurance": {"type": "boolean", "description": "Add travel insurance"},
		"budget": {"type": "object", "properties": {
			"limit": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
			"currency": {"enum": ["EUR", "USD"], "default": "EUR"}
		}, "required": ["limit"]},
		"return": {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]},
		"tags": {"type": "array", "items": {"enum": ["work", "family", "solo"]}},
		"stops": {"type": "array", "items": {"type": "string", "title": "Stop"}, "maxItems": 3},
		"notes": {"type": "string"},
		"code": {"type": "string", "minLength": 2, "maxLength": 3}
	},
	"required": ["destination", "nights", "class", "budget"],
	"additionalProperties": false
}`

// TripState is the state of the trip graph.
type TripState struct {
	Answer json.RawMessage `json:"answer,omitempty"`
}

// askingGraph returns a graph named name that asks req once and keeps the answer.
func askingGraph(name string, req interlude.Request) func(opts ...graph.Option) (graph.Erased, error) {
	return func(opts ...graph.Option) (graph.Erased, error) {
		g := graph.New[TripState]()
		g.AddNode("ask", func(ctx context.Context, s TripState) (TripState, error) {
			ans, err := interlude.Interrupt(ctx, req)
			if err != nil {
				return TripState{}, err
			}
			return TripState{Answer: ans.Data}, nil
		})
		g.AddEdge(graph.Start, "ask")
		c, err := g.Compile(append([]graph.Option{graph.WithName(name)}, opts...)...)
		if err != nil {
			return nil, err
		}
		return c.Erase(), nil
	}
}

// tripGraph asks one question with tripSchema and keeps the answer.
var tripGraph = askingGraph("trip", interlude.Request{
	Message: "Plan the team trip",
	Reason:  "input_required",
	Value: map[string]any{"requested_by": "Ann", "travellers": []string{"Ann", "Bo"},
		"itinerary": map[string]any{"legs": []map[string]any{{"from": "AMS", "to": "LIS"}}}},
	Schema: tripSchema,
})

func field(path string) string { return fmt.Sprintf(`[data-path=%s]`, js(path)) }

func TestTheAnswerFormIsBuiltFromTheResponseSchema(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil, tripGraph)
	e.start(e.client(), "trip", "trip-1", map[string]any{})
	openInbox(t, ctx, e)
	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("trip-1"))))
	until(t, ctx, "the form", `document.querySelector('form.answer-form')`)

	// The value: fields readable, deeper JSON folded.
	contains(t, "the details", text(t, ctx, ".value"), "requested_by", "Ann", "Bo", "itinerary")
	if !eval[bool](t, ctx, `(() => { const d = document.querySelector('.value details.json'); return !!d && !d.open })()`) {
		t.Error("the nested itinerary is not folded")
	}

	checks := map[string]string{
		// destination: a required text input with its length limits, label and help
		`(() => { const i = document.querySelector('` + field("/destination") + ` input'); return [i.type, i.required, i.labels[0].innerText.replace('*', '').trim(), document.getElementById(i.getAttribute('aria-describedby')).innerText].join('|') })()`: "text|true|Destination|The city to travel to. 2 to 40 characters.",
		// nights: an integer input, its default filled in
		`(() => { const i = document.querySelector('` + field("/nights") + ` input'); return [i.type, i.min, i.max, i.step, i.value, i.required].join('|') })()`: "number|1|14|1|3|true",
		// class: three radio buttons, the default chosen
		`[...document.querySelectorAll('` + field("/class") + ` input[type=radio]')].map(r => r.nextElementSibling.innerText + (r.checked ? '*' : '')).join('|')`: "economy*|premium|business",
		// airport: more than four choices make a select
		`[...document.querySelectorAll('` + field("/airport") + ` select option')].map(o => o.innerText).join('|')`: "(none)|AMS|CDG|FRA|LHR|MAD|ZRH",
		// insurance: a checkbox among other fields
		`(() => { const i = document.querySelector('` + field("/insurance") + ` input'); return [i.type, i.checked, i.labels[0].innerText].join('|') })()`: "checkbox|false|Insurance",
		// budget: a fieldset, its required limit a number with an exclusive minimum
		`(() => { const f = document.querySelector('` + field("/budget") + `'); const i = f.querySelector('` + field("/budget/limit") + ` input'); return [f.tagName, f.querySelector('legend').innerText, i.min, i.step, i.required].join('|') })()`: "FIELDSET|Budget*|0|any|true",
		// return: an optional object, so its required date is not required until it is sent
		`(() => { const i = document.querySelector('` + field("/return/date") + ` input'); return [i.required, document.querySelector('` + field("/return") + ` legend').innerText].join('|') })()`: "false|Return",
		// tags: checkboxes for an array of choices
		`[...document.querySelectorAll('` + field("/tags") + ` input[type=checkbox]')].map(c => c.labels[0].innerText).join('|')`: "work|family|solo",
		// stops: a list that grows
		`document.querySelector('` + field("/stops") + ` button').innerText`: "Add stop",
		// notes: long text
		`document.querySelector('` + field("/notes") + ` textarea') !== null`: "true",
		// every control has a label
		`[...document.querySelectorAll('form.answer-form input, form.answer-form select, form.answer-form textarea')].every(el => el.labels.length > 0)`: "true",
	}
	for expr, want := range checks {
		if got := eval[any](t, ctx, expr); fmt.Sprint(got) != want {
			t.Errorf("%s\n = %v, want %s", expr, got, want)
		}
	}

	// Lengths count characters, as JSON Schema does: an emoji is one.
	for value, valid := range map[string]bool{"L": false, "😀": false, "😀😀": true, "😀😀😀": true, "😀😀😀😀": false, "abcd": false} {
		setField(t, ctx, field("/code")+" input", value)
		if got := eval[bool](t, ctx, `document.querySelector('`+field("/code")+` input').checkValidity()`); got != valid {
			t.Errorf("code %q: valid %v, want %v (2 to 3 characters)", value, got, valid)
		}
	}
	setField(t, ctx, field("/code")+" input", "")
	// The pattern is checked by the browser (custom validity)...
	setField(t, ctx, field("/destination")+" input", "lisbon")
	if eval[bool](t, ctx, `document.querySelector('`+field("/destination")+` input').checkValidity()`) {
		t.Error("a destination against the pattern passes the browser's check")
	}
	// ...and, past it, by the server, whose error shows at the nested field.
	setField(t, ctx, field("/budget/limit")+" input", "10.25")
	setField(t, ctx, field("/nights")+" input", "")
	skipPageChecks(t, ctx, "form.answer-form")
	do(t, ctx, "send", chromedp.Click(chromedp.CSS(`form.answer-form button[type=submit]`)))
	until(t, ctx, "the server's errors", `['/destination', '/budget/limit', '/nights'].every(p => !document.querySelector('[data-path="' + p + '"] .error').hidden)`)
	contains(t, "the limit's error", text(t, ctx, field("/budget/limit")+" .error"), "multiple")
	contains(t, "the missing nights' error", text(t, ctx, field("/nights")+" .error"), "required")

	// A full answer arrives as the JSON the schema describes.
	setField(t, ctx, field("/destination")+" input", "Lisbon")
	setField(t, ctx, field("/nights")+" input", "5")
	do(t, ctx, "fill in",
		chromedp.Click(chromedp.CSS(field("/class")+` input[value="2"]`)),
		chromedp.Click(chromedp.CSS(field("/insurance")+` input`)),
		chromedp.Click(chromedp.CSS(field("/budget/currency")+` input[value="1"]`)),
		chromedp.Click(chromedp.CSS(field("/tags")+` .choice:nth-child(1) input`)),
		chromedp.Click(chromedp.CSS(field("/tags")+` .choice:nth-child(3) input`)),
		chromedp.Click(chromedp.CSS(field("/stops")+` > button`)))
	setField(t, ctx, field("/airport")+" select", "3")
	setField(t, ctx, field("/budget/limit")+" input", "1500.5")
	setField(t, ctx, field("/stops/0")+" input", "Porto")
	setField(t, ctx, field("/notes")+" textarea", "Window seats")
	do(t, ctx, "send", chromedp.Click(chromedp.CSS(`form.answer-form button[type=submit]`)))
	until(t, ctx, "the outcome", `document.querySelector('.flash')?.innerText.includes('Answered')`)
	th, err := e.client().Thread(context.Background(), "trip-1")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Answer json.RawMessage `json:"answer"`
	}
	json.Unmarshal(th.Values, &v)
	want := `{"destination":"Lisbon","nights":5,"class":"business","airport":"LHR","insurance":true,"budget":{"limit":1500.5,"currency":"USD"},"tags":["work","solo"],"stops":["Porto"],"notes":"Window seats"}`
	if canonical(t, v.Answer) != canonical(t, []byte(want)) {
		t.Errorf("the answer is %s, want %s", v.Answer, want)
	}
}

func canonical(t *testing.T, data []byte) string {
	t.Helper()
	var x any
	if err := json.Unmarshal(data, &x); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

func TestTheInboxWorksByKeyboardAndAtPhoneWidth(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	e.start(e.client(), "refund", "r-1", map[string]any{"amount": 150})
	// A long unbreakable order id, as a URL or a hash would be, must wrap too.
	e.ask(e.client(), "s-1", "Please refund $40 on order A-"+strings.Repeat("2002", 20))
	const phone = 390
	do(t, ctx, "a phone's viewport", chromedp.EmulateViewport(phone, 844, chromedp.EmulateMobile))
	openInbox(t, ctx, e)
	until(t, ctx, "the list", rows+` === 2`)
	// Against the phone's width, not window.innerWidth: a mobile browser widens
	// its layout viewport to content that overflows.
	fits := fmt.Sprintf(`document.documentElement.scrollWidth <= %d`, phone)
	if !eval[bool](t, ctx, fits) {
		t.Errorf("the list is wider than the phone: %d px", eval[int](t, ctx, `document.documentElement.scrollWidth`))
	}

	// Tab to the first question, open it with Enter.
	for i := 0; i < 12 && !eval[bool](t, ctx, `!!document.activeElement?.closest('#questions')`); i++ {
		do(t, ctx, "tab", chromedp.KeyEvent(kb.Tab))
	}
	if !eval[bool](t, ctx, `!!document.activeElement?.closest('#questions')`) {
		t.Fatal("the questions cannot be reached with Tab")
	}
	if style := eval[string](t, ctx, `getComputedStyle(document.activeElement).outlineStyle`); style != "solid" {
		t.Errorf("the focused question shows no outline (%q)", style)
	}
	thread := eval[string](t, ctx, `document.activeElement.closest('li').dataset.thread`)
	do(t, ctx, "enter", chromedp.KeyEvent(kb.Enter))
	until(t, ctx, "the question, focused", `document.activeElement?.tagName === 'H2' && document.activeElement.closest('.question')`)
	if thread != "s-1" {
		t.Errorf("the first question is from %s, want s-1 (the newest)", thread)
	}
	// At phone width the question replaces the list, with a way back.
	if !eval[bool](t, ctx, `document.querySelector('.list-pane').offsetParent === null && document.querySelector('.back a').offsetParent !== null`) {
		t.Error("at phone width the list stays beside the question, or there is no way back")
	}
	if !eval[bool](t, ctx, fits) {
		t.Errorf("the question is wider than the phone: %d px", eval[int](t, ctx, `document.documentElement.scrollWidth`))
	}
	// The decision is a radio group: the arrow keys move the choice.
	do(t, ctx, "focus approve", chromedp.Focus(chromedp.CSS(`.decision input[value="approve"]`)), chromedp.KeyEvent(kb.ArrowDown))
	if got := eval[string](t, ctx, `document.querySelector('form.tool-approval button[type=submit]').innerText`); got != "Run with these arguments" {
		t.Errorf("after the arrow key the button says %q", got)
	}
	do(t, ctx, "back", chromedp.Click(chromedp.CSS(`.back a`)))
	until(t, ctx, "the list again", `document.querySelector('.list-pane').offsetParent !== null`)
}

// noteGraph asks for a short note: an answer that is a string, not an object.
var noteGraph = askingGraph("note", interlude.Request{Message: "Sign the note", Schema: `{"type": "string", "minLength": 2}`})

func TestARefusedAnswerThatIsAStringIsMarkedAtItsField(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil, noteGraph)
	e.start(e.client(), "note", "note-1", map[string]any{})
	openInbox(t, ctx, e)
	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("note-1"))))
	until(t, ctx, "the form", `document.querySelector('form.answer-form input')`)
	setField(t, ctx, "form.answer-form input", "x")
	skipPageChecks(t, ctx, "form.answer-form")
	do(t, ctx, "send past the page's check", chromedp.Click(chromedp.CSS(`form.answer-form button[type=submit]`)))
	until(t, ctx, "the server's error at the field", `document.querySelector('form.answer-form input').getAttribute('aria-invalid') === 'true'`)
	contains(t, "the field's error", text(t, ctx, `form.answer-form .error:not([hidden])`), "minLength")
}
