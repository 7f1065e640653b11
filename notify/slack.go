package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/store"
	"github.com/slack-go/slack"
)

// SlackConfig describes a Slack channel that questions are posted to, with
// buttons to answer them.
type SlackConfig struct {
	// Name names it in the delivery log (default: "slack" and the channel).
	Name string `json:"name,omitempty"`
	// BotToken is the Slack app's bot token (xoxb-...), which needs the
	// chat:write scope.
	BotToken string `json:"bot_token"`
	// SigningSecret is the app's signing secret, which the requests of its
	// buttons are verified with.
	SigningSecret string `json:"signing_secret"`
	// Channel is the channel id (C...) the questions are posted to.
	Channel string `json:"channel"`
	// Users maps Slack user ids (U...) to the Interlude names (API tokens'
	// names) they answer as; a user not listed cannot answer from Slack.
	Users map[string]string `json:"users,omitempty"`
	// APIURL is Slack's Web API address (default https://slack.com/api/).
	APIURL string `json:"api_url,omitempty"`
	// Route selects the notifications sent there.
	Route
}

// Slack is a destination that posts each new question to a Slack channel as
// a message with its context and, for an approval, Approve and Reject
// buttons (Slack's interactivity requests reach Slack.Handler), and with a
// link to the question in the web inbox. When the question is closed (in
// Slack, the inbox, through the API, or by expiry) the message is updated in
// place to say how and by whom.
//
// Which message shows which question is kept in the store of the dispatcher
// the destination is given to (New), as a document of kind SlackMessageKind,
// if the store keeps documents (store.Documents): so a message posted before
// a restart is still updated after it. Without one it is kept in memory only.
type Slack struct {
	cfg    SlackConfig
	name   string
	client *slack.Client
	log    *slog.Logger

	mu   sync.Mutex
	msgs map[string]*slackMessage // by thread and question
	docs store.Documents          // where messages are remembered across restarts, or nil
}

// SlackMessageKind is the kind of the documents (store.Documents) in which a
// Slack destination remembers the message it posted for a question, filed
// under the question's thread, keyed by question and destination.
const SlackMessageKind = "slack.message"

// slackDoc is a SlackMessageKind document: where the question's message is,
// and the question as posted, to answer its buttons and show its outcome.
type slackDoc struct {
	Channel  string          `json:"channel"`
	TS       string          `json:"ts"`
	Graph    string          `json:"graph"`
	InboxURL string          `json:"inbox_url,omitempty"`
	Notice   json.RawMessage `json:"notice"` // the raised notice's payload (graph.NoticeData)
}

// slackMessage is what a Slack destination knows of one question's message.
type slackMessage struct {
	channel, ts string
	raised      *Notification // the question, once posted
	closed      *Notification // how it was closed, once known
	stored      bool          // the store has channel and ts
}

// useStore makes s remember its messages in st, if st keeps documents; New
// calls it with the dispatcher's store.
func (s *Slack) useStore(st store.Store) {
	docs, _ := store.As[store.Documents](st)
	s.mu.Lock()
	s.docs = docs
	s.mu.Unlock()
}

// docKey is the key of the document of a question's message: the question's
// id and the destination's name, so that two channels keep theirs apart.
func (s *Slack) docKey(interruptID string) string { return interruptID + " " + s.name }

// remember stores where the question n raised was posted.
func (s *Slack) remember(ctx context.Context, n *Notification, channel, ts string) error {
	s.mu.Lock()
	docs := s.docs
	s.mu.Unlock()
	if docs == nil {
		return nil
	}
	data, err := json.Marshal(slackDoc{Channel: channel, TS: ts, Graph: n.Notice.Graph, InboxURL: n.InboxURL, Notice: n.Notice.Data})
	if err != nil {
		return err
	}
	if err := docs.PutDocument(ctx, store.Document{ThreadID: n.Notice.ThreadID, Kind: SlackMessageKind, Key: s.docKey(n.Data.Interrupt.ID), Data: data}); err != nil {
		return fmt.Errorf("remember the Slack message: %w", err)
	}
	return nil
}

// recall returns the stored message of a question and the question as posted,
// or nil if none is stored.
func (s *Slack) recall(ctx context.Context, threadID, interruptID string) (*slackMessage, error) {
	s.mu.Lock()
	docs := s.docs
	s.mu.Unlock()
	if docs == nil {
		return nil, nil
	}
	d, err := docs.Document(ctx, threadID, SlackMessageKind, s.docKey(interruptID))
	if errors.Is(err, interlude.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recall the Slack message: %w", err)
	}
	var doc slackDoc
	if err := json.Unmarshal(d.Data, &doc); err != nil {
		return nil, fmt.Errorf("recall the Slack message: %w", err)
	}
	n := &Notification{Notice: store.Notice{ThreadID: threadID, Graph: doc.Graph, Type: store.NoticeRaised, InterruptID: interruptID, Data: doc.Notice},
		InboxURL: doc.InboxURL}
	if err := json.Unmarshal(doc.Notice, &n.Data); err != nil || n.Data.Interrupt == nil {
		return nil, fmt.Errorf("recall the Slack message: the stored question cannot be read (%v)", err)
	}
	return &slackMessage{channel: doc.Channel, ts: doc.TS, raised: n, stored: true}, nil
}

// forget deletes the stored message of a question, once it shows the outcome.
func (s *Slack) forget(ctx context.Context, threadID, interruptID string) error {
	s.mu.Lock()
	docs := s.docs
	s.mu.Unlock()
	if docs == nil {
		return nil
	}
	if err := docs.DeleteDocument(ctx, threadID, SlackMessageKind, s.docKey(interruptID)); err != nil {
		return fmt.Errorf("forget the Slack message: %w", err)
	}
	return nil
}

// message returns what s knows of a question's message: in memory, else in
// the store (a message posted before a restart), else nil.
func (s *Slack) message(ctx context.Context, threadID, interruptID string) (*slackMessage, error) {
	key := threadID + "\x00" + interruptID
	s.mu.Lock()
	m := s.msgs[key]
	s.mu.Unlock()
	if m != nil && m.ts != "" {
		return m, nil
	}
	return s.recall(ctx, threadID, interruptID)
}

// NewSlack returns the Slack destination cfg describes. client may be nil for
// http.DefaultClient.
func NewSlack(cfg SlackConfig, client *http.Client) (*Slack, error) {
	switch {
	case cfg.BotToken == "":
		return nil, errors.New("notify: a Slack channel needs the app's bot_token (xoxb-...)")
	case cfg.SigningSecret == "":
		return nil, errors.New("notify: a Slack channel needs the app's signing_secret, to verify its button clicks")
	case cfg.Channel == "":
		return nil, errors.New("notify: a Slack channel needs the channel id (C...) to post to")
	}
	if err := cfg.Route.check(); err != nil {
		return nil, fmt.Errorf("notify: slack %s: %w", cfg.Channel, err)
	}
	opts := []slack.Option{}
	if cfg.APIURL != "" {
		if _, ok := options.HTTPURL(cfg.APIURL); !ok {
			return nil, fmt.Errorf("notify: slack api_url %q is not an http(s) URL", cfg.APIURL)
		}
		opts = append(opts, slack.OptionAPIURL(strings.TrimSuffix(cfg.APIURL, "/")+"/"))
	}
	if client != nil {
		opts = append(opts, slack.OptionHTTPClient(client))
	}
	name := cfg.Name
	if name == "" {
		name = "slack " + cfg.Channel
	}
	return &Slack{cfg: cfg, name: name, client: slack.New(cfg.BotToken, opts...), log: slog.Default(),
		msgs: map[string]*slackMessage{}}, nil
}

// Name implements Destination.
func (s *Slack) Name() string { return s.name }

// Wants implements Destination: the route's notices about questions.
func (s *Slack) Wants(n *Notification) bool { return n.Data.Interrupt != nil && s.cfg.Route.Wants(n) }

// Deliver implements Destination: a raised question is posted; a closed one
// updates the question's message.
func (s *Slack) Deliver(ctx context.Context, n *Notification) error {
	key := n.Notice.ThreadID + "\x00" + n.Data.Interrupt.ID
	if n.Notice.Type == store.NoticeRaised {
		m, err := s.message(ctx, n.Notice.ThreadID, n.Data.Interrupt.ID)
		if err != nil {
			return err
		}
		if m != nil && m.ts != "" {
			// Posted by an attempt whose settle was lost, or that could
			// not store the message.
			if !m.stored {
				if err := s.remember(ctx, n, m.channel, m.ts); err != nil {
					return err
				}
				s.mu.Lock()
				m.stored = true
				s.mu.Unlock()
			}
			return nil
		}
		blocks := slackQuestion(n)
		channel, ts, err := s.client.PostMessageContext(ctx, s.cfg.Channel,
			slack.MsgOptionText(fallbackText(n), false), slack.MsgOptionBlocks(blocks...))
		if err != nil {
			return fmt.Errorf("post to Slack: %w", err)
		}
		s.mu.Lock()
		if m = s.msgs[key]; m == nil {
			m = &slackMessage{}
			s.msgs[key] = m
		}
		m.channel, m.ts, m.raised = channel, ts, n
		s.mu.Unlock()
		if err := s.remember(ctx, n, channel, ts); err != nil {
			return err // tried again without posting twice: the message is in memory
		}
		s.mu.Lock()
		m.stored = true
		closed := m.closed
		s.mu.Unlock()
		if closed == nil {
			return nil
		}
		// Closed while the message was being posted: show how at once.
		return s.update(ctx, channel, ts, n, closed.Data.Resolution)
	}
	s.mu.Lock()
	m := s.msgs[key]
	if m == nil {
		m = &slackMessage{}
		s.msgs[key] = m
	}
	m.closed = n
	channel, ts := m.channel, m.ts
	s.mu.Unlock()
	if ts == "" {
		// Posted before a restart?
		old, err := s.recall(ctx, n.Notice.ThreadID, n.Data.Interrupt.ID)
		if err != nil {
			return err
		}
		if old == nil {
			return nil // not posted (yet): posting it will show the outcome
		}
		channel, ts = old.channel, old.ts
	}
	if err := s.update(ctx, channel, ts, n, n.Data.Resolution); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.msgs, key) // done with: a later click is told the answer given
	s.mu.Unlock()
	return s.forget(ctx, n.Notice.ThreadID, n.Data.Interrupt.ID)
}

// update rewrites a question's message to show its outcome.
func (s *Slack) update(ctx context.Context, channel, ts string, n *Notification, r *interlude.Resolution) error {
	if _, _, _, err := s.client.UpdateMessageContext(ctx, channel, ts,
		slack.MsgOptionText(outcomeText(r), false), slack.MsgOptionBlocks(slackOutcome(n, r)...)); err != nil {
		return fmt.Errorf("update the Slack message: %w", err)
	}
	return nil
}

// The action ids of the buttons, and the callback id of the rejection modal.
const (
	slackApprove = "interlude_approve"
	slackReject  = "interlude_reject"
	slackOpen    = "interlude_open"
	slackReason  = "interlude_reason"
)

// slackRef names a question in a button's value and a modal's metadata.
type slackRef struct {
	ThreadID    string `json:"t"`
	InterruptID string `json:"q"`
	Channel     string `json:"c,omitempty"`
	TS          string `json:"ts,omitempty"`
}

func (r slackRef) encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// isApproval reports whether a question takes a plain yes or no: a tool
// approval, a question whose answer is a boolean, or an approval without a
// schema.
func isApproval(q *interlude.Interruption) bool {
	if q.Reason == interlude.ReasonToolApproval {
		return true
	}
	var schema struct {
		Type string `json:"type"`
	}
	if len(q.Schema) > 0 {
		return json.Unmarshal(q.Schema, &schema) == nil && schema.Type == "boolean"
	}
	return q.Reason == "approval"
}

// approveAnswer is the answer the Approve button gives.
func approveAnswer(q *interlude.Interruption) interlude.Resolution {
	if q.Reason == interlude.ReasonToolApproval {
		return interlude.Resolve(map[string]string{"action": "approve"})
	}
	return interlude.Resolve(true)
}

func fallbackText(n *Notification) string {
	return fmt.Sprintf("%s (%s, thread %s)", n.Data.Interrupt.Message, n.Notice.Graph, n.Notice.ThreadID)
}

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}
func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// escape keeps text from being read as Slack markup.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackContext returns the blocks that say what a question is about: its
// text, graph, thread and path, and for a tool approval the tool and its
// arguments.
func slackContext(n *Notification) []slack.Block {
	q := n.Data.Interrupt
	blocks := []slack.Block{slack.NewSectionBlock(mrkdwn("*"+escape(q.Message)+"*"), nil, nil)}
	where := fmt.Sprintf("graph *%s* · thread `%s`", escape(n.Notice.Graph), escape(n.Notice.ThreadID))
	if len(q.Path) > 0 {
		where += " · path `" + escape(strings.Join(q.Path, "/")) + "`"
	}
	if len(q.Assignees) > 0 {
		where += " · for " + escape(strings.Join(q.Assignees, ", "))
	}
	blocks = append(blocks, slack.NewContextBlock("", mrkdwn(where)))
	var tool struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if q.Reason == interlude.ReasonToolApproval && json.Unmarshal(q.Value, &tool) == nil && tool.Tool != "" {
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn("Tool *"+escape(tool.Tool)+"* with arguments\n```"+escape(indent(tool.Arguments))+"```"), nil, nil))
	} else if len(q.Value) > 0 && string(q.Value) != "null" {
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn("```"+escape(indent(q.Value))+"```"), nil, nil))
	}
	return blocks
}

// indent pretty-prints JSON, cut to what a Slack section holds.
func indent(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > 2500 {
		s = s[:2500] + "\n…"
	}
	return s
}

// slackQuestion is the message of an open question.
func slackQuestion(n *Notification) []slack.Block {
	q := n.Data.Interrupt
	blocks := slackContext(n)
	ref := slackRef{ThreadID: n.Notice.ThreadID, InterruptID: q.ID}.encode()
	var buttons []slack.BlockElement
	if isApproval(q) {
		approve := slack.NewButtonBlockElement(slackApprove, ref, plain("Approve"))
		approve.Style = slack.StylePrimary
		reject := slack.NewButtonBlockElement(slackReject, ref, plain("Reject"))
		reject.Style = slack.StyleDanger
		buttons = append(buttons, approve, reject)
	}
	if n.InboxURL != "" {
		open := slack.NewButtonBlockElement(slackOpen, "", plain("Open in inbox"))
		open.URL = n.InboxURL
		buttons = append(buttons, open)
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("interlude_actions", buttons...))
	}
	return blocks
}

// outcomeText says how a question was closed and by whom.
func outcomeText(r *interlude.Resolution) string {
	if r == nil {
		return "Closed"
	}
	by := ""
	if r.By != "" {
		by = " by " + r.By
	}
	switch r.Status {
	case interlude.Resolved:
		var v any
		_ = json.Unmarshal(r.Response, &v)
		switch v := v.(type) {
		case bool:
			if !v {
				return "Declined" + by
			}
			return "Approved" + by
		case map[string]any:
			if v["action"] == "approve" {
				return "Approved" + by
			}
			if a, ok := v["action"].(string); ok && a != "" {
				return "Answered (" + a + ")" + by
			}
		}
		return "Answered" + by
	case interlude.Rejected:
		if r.Error != nil && r.Error.Message != "" {
			return "Rejected" + by + ": " + r.Error.Message
		}
		return "Rejected" + by
	case interlude.Expired:
		return "Expired unanswered"
	default:
		return "Cancelled" + by
	}
}

// slackOutcome is the message of a closed question: its context and outcome,
// without buttons.
func slackOutcome(n *Notification, r *interlude.Resolution) []slack.Block {
	blocks := slackContext(n)
	line := "*" + escape(outcomeText(r)) + "*"
	if r != nil && !r.At.IsZero() {
		line += fmt.Sprintf(" · <!date^%d^{date_short_pretty} {time}|%s>", r.At.Unix(), r.At.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if n.InboxURL != "" {
		line += " · <" + n.InboxURL + "|open in inbox>"
	}
	return append(blocks, slack.NewContextBlock("interlude_outcome", mrkdwn(line)))
}

// Decision is an answer given in a chat: who gave it (the Interlude name the
// chat user maps to), to which question, and what it is.
type Decision struct {
	// ThreadID and InterruptID name the question.
	ThreadID, InterruptID string
	// Name is the Interlude name of the person who answered.
	Name string
	// Resolution is the answer.
	Resolution interlude.Resolution
}

// AnswerFunc answers a question as the person a Decision names, so that the
// check of its assignees applies and its history records who answered. It
// returns the resolution recorded before when the same answer had already
// been given (a replay: nothing was applied again), else nil. A server
// answers through its host (server.WithSlack).
type AnswerFunc func(ctx context.Context, d Decision) (replayed *interlude.Resolution, err error)

// Handler returns the handler of the Slack app's interactivity requests
// (button clicks and the rejection form): it verifies each request's
// signature with the signing secret (401 otherwise), maps the Slack user to
// an Interlude name through the configured users (an unmapped user is told
// so, and nothing changes), and answers through answer. The outcome reaches
// the message when the answer's notice is delivered; a repeated click shows
// the answer already given.
func (s *Slack) Handler(answer AnswerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read the request", http.StatusBadRequest)
			return
		}
		v, err := slack.NewSecretsVerifier(r.Header, s.cfg.SigningSecret)
		if err == nil {
			v.Write(body)
			err = v.Ensure()
		}
		if err != nil {
			http.Error(w, "the request is not signed with this Slack app's signing secret", http.StatusUnauthorized)
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "the body is not a form", http.StatusBadRequest)
			return
		}
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
			http.Error(w, "the form has no interaction payload", http.StatusBadRequest)
			return
		}
		ctx := r.Context()
		switch cb.Type {
		case slack.InteractionTypeBlockActions:
			s.clicked(ctx, &cb, answer)
			w.WriteHeader(http.StatusOK)
		case slack.InteractionTypeViewSubmission:
			s.submitted(ctx, w, &cb, answer)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
}

// tell shows a message to one user only, in the channel of the click.
func (s *Slack) tell(ctx context.Context, channel, user, text string) {
	if _, err := s.client.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false)); err != nil {
		s.log.Warn("telling a Slack user failed", "user", user, "err", err)
	}
}

// unmapped is what a Slack user without an Interlude name is told.
const unmapped = "Sorry, your Slack account is not linked to an Interlude user, so you cannot answer questions from Slack. Ask an Interlude admin to add your Slack user id (%s) to the Slack users of the notification config, or answer in the web inbox."

// clicked handles a button of a question's message.
func (s *Slack) clicked(ctx context.Context, cb *slack.InteractionCallback, answer AnswerFunc) {
	if len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	act := cb.ActionCallback.BlockActions[0]
	if act.ActionID != slackApprove && act.ActionID != slackReject {
		return // the inbox link: Slack opens it
	}
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	var ref slackRef
	if err := json.Unmarshal([]byte(act.Value), &ref); err != nil || ref.ThreadID == "" || ref.InterruptID == "" {
		s.tell(ctx, channel, cb.User.ID, "This button names no question; it may come from an older version of Interlude.")
		return
	}
	name, ok := s.cfg.Users[cb.User.ID]
	if !ok {
		s.tell(ctx, channel, cb.User.ID, fmt.Sprintf(unmapped, cb.User.ID))
		return
	}
	ref.Channel, ref.TS = channel, cb.Container.MessageTs
	if ref.TS == "" {
		ref.TS = cb.Message.Timestamp
	}
	if act.ActionID == slackReject {
		modal := slack.ModalViewRequest{Type: slack.VTModal, CallbackID: slackReject, PrivateMetadata: ref.encode(),
			Title: plain("Reject"), Submit: plain("Reject"), Close: plain("Cancel"),
			Blocks: slack.Blocks{BlockSet: []slack.Block{
				slack.NewInputBlock(slackReason, plain("Why?"), plain("The reason is recorded with the rejection and given to the graph."),
					slack.NewPlainTextInputBlockElement(plain("The reason for rejecting"), slackReason)),
			}}}
		modal.Blocks.BlockSet[0].(*slack.InputBlock).Element.(*slack.PlainTextInputBlockElement).Multiline = true
		if _, err := s.client.OpenViewContext(ctx, cb.TriggerID, modal); err != nil {
			s.log.Warn("opening the Slack rejection form failed", "err", err)
			s.tell(ctx, channel, cb.User.ID, "The rejection form could not be opened; reject in the web inbox instead.")
		}
		return
	}
	q := s.question(ctx, ref)
	res := interlude.Resolve(true)
	if q != nil {
		res = approveAnswer(q.Data.Interrupt)
	}
	if msg := s.decide(ctx, ref, Decision{ThreadID: ref.ThreadID, InterruptID: ref.InterruptID, Name: name, Resolution: res}, answer); msg != "" {
		s.tell(ctx, channel, cb.User.ID, msg)
	}
}

// submitted handles the rejection form.
func (s *Slack) submitted(ctx context.Context, w http.ResponseWriter, cb *slack.InteractionCallback, answer AnswerFunc) {
	if cb.View.CallbackID != slackReject {
		w.WriteHeader(http.StatusOK)
		return
	}
	var ref slackRef
	if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &ref); err != nil || ref.ThreadID == "" {
		writeViewErrors(w, "This form names no question; reject in the web inbox instead.")
		return
	}
	name, ok := s.cfg.Users[cb.User.ID]
	if !ok {
		writeViewErrors(w, fmt.Sprintf(unmapped, cb.User.ID))
		return
	}
	var reason string
	if st := cb.View.State; st != nil {
		reason = strings.TrimSpace(st.Values[slackReason][slackReason].Value)
	}
	if reason == "" {
		writeViewErrors(w, "Say why the question is rejected.")
		return
	}
	d := Decision{ThreadID: ref.ThreadID, InterruptID: ref.InterruptID, Name: name,
		Resolution: interlude.Reject(&interlude.RejectedError{Name: "Rejected", Message: reason})}
	if msg := s.decide(ctx, ref, d, answer); msg != "" {
		writeViewErrors(w, msg)
		return
	}
	w.WriteHeader(http.StatusOK) // closes the form
}

// writeViewErrors keeps the rejection form open with msg under its field.
func writeViewErrors(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(slack.NewErrorsViewSubmissionResponse(map[string]string{slackReason: msg}))
}

// question returns the posted notification of the question ref names, if
// this destination posted it (before a restart too, if its store keeps the
// message).
func (s *Slack) question(ctx context.Context, ref slackRef) *Notification {
	m, err := s.message(ctx, ref.ThreadID, ref.InterruptID)
	if err != nil {
		s.log.Warn("reading a Slack message's question failed", "thread_id", ref.ThreadID, "interrupt_id", ref.InterruptID, "err", err)
	}
	if m == nil {
		return nil
	}
	return m.raised
}

// decide answers d and returns what to tell the person, or "" when the answer
// was taken (its notice then updates the message). A replay updates the
// message to the answer already given.
func (s *Slack) decide(ctx context.Context, ref slackRef, d Decision, answer AnswerFunc) string {
	prev, err := answer(ctx, d)
	if err != nil {
		var ie *interlude.Error
		if errors.As(err, &ie) {
			return "Your answer was not taken: " + ie.Message
		}
		s.log.Warn("answering from Slack failed", "thread_id", d.ThreadID, "interrupt_id", d.InterruptID, "err", err)
		return "Your answer could not be recorded just now; try again, or answer in the web inbox."
	}
	if prev == nil {
		return ""
	}
	if q := s.question(ctx, ref); q != nil && ref.TS != "" {
		if err := s.update(ctx, ref.Channel, ref.TS, q, prev); err != nil {
			s.log.Warn("updating a Slack message failed", "err", err)
		}
	}
	return "This question was already answered: " + outcomeText(prev) + "."
}
