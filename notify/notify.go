// Package notify delivers the notices a host's graphs write to the store's
// outbox (graph.WithOutbox, store.Outbox) to where the people who answer
// already are: webhooks (Standard Webhooks), a Slack channel, and any other
// Destination.
//
// Slack posts each new question with its context and, for a yes-or-no
// question, Approve and Reject buttons; Slack.Handler serves the app's
// interactivity requests (server.WithSlack mounts it), verifying their
// signature and answering as the Interlude user the Slack user is mapped to.
// The message is updated in place when the question is answered, rejected,
// cancelled or expired, from those notices, wherever the answer came from.
// It remembers which message shows which question in the dispatcher's store
// (store.Documents), so that a message posted before a restart is updated
// after it.
//
// A Dispatcher claims due notices from the outbox, hands each to every
// destination whose route wants it, and records the outcome in the store:
// delivered once every destination took it; otherwise tried again later, with
// exponential backoff, only at the destinations that did not; failed (a
// dead letter, listed in the delivery log and retried by hand) after the last
// attempt. Delivery is at least once: a dispatcher that dies mid-delivery
// leaves its claim to expire and another takes the notice over, so a receiver
// drops repeats by the notice's id, which is the same on every attempt. With
// several processes over one store (Postgres), the claim makes one of them
// deliver each notice. The outcomes of a claimed batch are recorded in one
// write that does not wait for the disk: one lost to a crash only delivers
// its notices again.
package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/store"
)

// Notification is a notice as destinations receive it: the stored notice, its
// payload read, and the link to its question in the web inbox.
type Notification struct {
	// Notice is the outbox entry; its ID is stable across attempts.
	Notice store.Notice
	// Data is the notice's payload.
	Data graph.NoticeData
	// InboxURL links to the question (or the thread) in the web inbox, if the
	// dispatcher knows the inbox's address (WithInboxURL).
	InboxURL string
}

// Destination is somewhere notices go: a webhook endpoint, a chat channel, a
// mailbox.
type Destination interface {
	// Name names the destination in the delivery log; it must be unique among
	// a dispatcher's destinations and stay the same across restarts, since a
	// notice records the destinations that took it.
	Name() string
	// Wants reports whether the notification is for this destination.
	Wants(n *Notification) bool
	// Deliver hands the notification over. An error means it was not taken
	// and is tried again later.
	Deliver(ctx context.Context, n *Notification) error
}

// Route selects notices by graph, question reason and type; an empty list
// selects all.
type Route struct {
	// Graphs are the graph names whose notices are wanted.
	Graphs []string `json:"graphs,omitempty"`
	// Reasons are the question reasons (interlude.Request.Reason) wanted;
	// a notice without a question (a failed thread) passes only if empty.
	Reasons []string `json:"reasons,omitempty"`
	// Types are the notice types (store.NoticeRaised, ...) wanted.
	Types []string `json:"types,omitempty"`
}

// Wants reports whether n passes the route.
func (r Route) Wants(n *Notification) bool {
	if len(r.Graphs) > 0 && !slices.Contains(r.Graphs, n.Notice.Graph) {
		return false
	}
	if len(r.Types) > 0 && !slices.Contains(r.Types, n.Notice.Type) {
		return false
	}
	if len(r.Reasons) > 0 && (n.Data.Interrupt == nil || !slices.Contains(r.Reasons, n.Data.Interrupt.Reason)) {
		return false
	}
	return true
}

// check refuses unknown notice types.
func (r Route) check() error {
	for _, t := range r.Types {
		if !slices.Contains(store.NoticeTypes, t) {
			return fmt.Errorf("unknown notice type %q; known: %s", t, strings.Join(store.NoticeTypes, ", "))
		}
	}
	return nil
}

// Retry is how a dispatcher tries again: Attempts in all, the first retry
// after First, each next one after twice the wait before, at most Max.
type Retry struct {
	Attempts   int
	First, Max time.Duration
}

// DefaultRetry tries 8 times over about 20 minutes.
var DefaultRetry = Retry{Attempts: 8, First: 10 * time.Second, Max: 10 * time.Minute}

// wait is the pause after the given failed attempt (1 for the first).
func (r Retry) wait(attempt int) time.Duration {
	d := r.First
	for i := 1; i < attempt && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}

// Dispatcher delivers an outbox's notices to destinations. It is safe for
// concurrent use.
type Dispatcher struct {
	config
	outbox   store.Outbox
	dests    []Destination
	parallel int
	wake     chan struct{}
	stats    counters
}

// config is what the options of New set.
type config struct {
	problems options.Problems
	owner    string
	retry    Retry
	poll     time.Duration
	claimTTL time.Duration
	timeout  time.Duration
	inbox    string
	now      func() time.Time
	log      *slog.Logger
	observe  func(Delivery)
	ext      extras // escalation policies and metrics (escalate.go, metrics.go)
}

// counters count attempts by what they left, for Stats.
type counters struct {
	delivered, retrying, failed atomic.Uint64
}

// Stats counts a dispatcher's attempts since it started, by what each left.
type Stats struct {
	// Delivered counts attempts after which every destination had the notice.
	Delivered uint64
	// Retrying counts failed attempts that left the notice to try again.
	Retrying uint64
	// Failed counts last attempts that failed (dead letters).
	Failed uint64
}

// Stats returns the dispatcher's counts of attempts, for metrics.
func (d *Dispatcher) Stats() Stats {
	return Stats{Delivered: d.stats.delivered.Load(), Retrying: d.stats.retrying.Load(), Failed: d.stats.failed.Load()}
}

// Delivery is the outcome of one attempt at one notice, for metrics
// (WithObserver).
type Delivery struct {
	// Notice is the notice as claimed (Attempts counts this attempt).
	Notice store.Notice
	// State is what the attempt left: delivered, pending (tried again later)
	// or failed (the last attempt).
	State store.NoticeState
	// Err is why it failed, if it did.
	Err error
}

// Option configures New.
type Option func(*config)

// WithOwner names the dispatcher in the claims it takes (default: host name
// and process id); dispatchers sharing a store need distinct owners.
func WithOwner(owner string) Option {
	return func(c *config) {
		if owner == "" {
			c.problems.Refuse("notify.WithOwner", "the owner is empty; name this dispatcher, or leave the option out")
			return
		}
		c.owner = owner
	}
}

// WithRetry sets how often and when a failed delivery is tried again
// (DefaultRetry otherwise).
func WithRetry(r Retry) Option {
	return func(c *config) {
		if r.Attempts < 1 || r.First <= 0 || r.Max < r.First {
			c.problems.Refuse("notify.WithRetry", "%+v: give at least 1 attempt and 0 < First <= Max", r)
			return
		}
		c.retry = r
	}
}

// WithPoll sets how often the dispatcher looks for due notices when nothing
// wakes it (default one second).
func WithPoll(every time.Duration) Option {
	return func(c *config) { c.poll = positive(c, "notify.WithPoll", every) }
}

// WithClaimTTL sets how long a claimed notice stays this dispatcher's before
// another may take it over (default one minute): longer than a delivery's
// timeout, so that only a dispatcher that died loses its claims.
func WithClaimTTL(ttl time.Duration) Option {
	return func(c *config) { c.claimTTL = positive(c, "notify.WithClaimTTL", ttl) }
}

// WithTimeout bounds one delivery to one destination (default 10 seconds).
func WithTimeout(t time.Duration) Option {
	return func(c *config) { c.timeout = positive(c, "notify.WithTimeout", t) }
}

// positive returns d, recording a d that is not positive as a problem.
func positive(c *config, option string, d time.Duration) time.Duration {
	if d <= 0 {
		c.problems.Refuse(option, "%v is not a positive duration", d)
	}
	return d
}

// WithInboxURL gives the web inbox's address (such as
// https://interlude.example.com/inbox/), so that notifications link to their
// question ("" for none).
func WithInboxURL(u string) Option {
	return func(c *config) {
		if u == "" {
			c.inbox = ""
			return
		}
		if _, ok := options.HTTPURL(u); !ok {
			c.problems.Refuse("notify.WithInboxURL", "%q is not an http(s) URL with a host, such as https://interlude.example.com/inbox/", u)
			return
		}
		c.inbox = u
	}
}

// WithClock sets the clock that judges when notices are due (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			c.problems.Refuse("notify.WithClock", "the clock is nil; leave the option out for time.Now")
			return
		}
		c.now = now
	}
}

// WithLogger sets where failed deliveries are logged (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.problems.Refuse("notify.WithLogger", "the logger is nil; leave the option out for slog.Default()")
			return
		}
		c.log = l
	}
}

// WithObserver calls fn after each attempt is settled in the store, for
// metrics.
func WithObserver(fn func(Delivery)) Option { return func(c *config) { c.observe = fn } }

// New returns a dispatcher of the outbox of st to dests.
func New(st store.Store, dests []Destination, opts ...Option) (*Dispatcher, error) {
	o, ok := store.As[store.Outbox](st)
	if !ok {
		return nil, fmt.Errorf("notify: %T keeps no outbox (store.Outbox)", st)
	}
	host, _ := os.Hostname()
	d := &Dispatcher{config: config{owner: fmt.Sprintf("%s/%d", host, os.Getpid()), retry: DefaultRetry,
		poll: time.Second, claimTTL: time.Minute, timeout: 10 * time.Second, now: time.Now, log: slog.Default()},
		outbox: o, dests: dests, parallel: 16, wake: make(chan struct{}, 1)}
	d.ext.init(st)
	for _, opt := range opts {
		opt(&d.config)
	}
	if err := d.problems.Err(); err != nil {
		return nil, err
	}
	if err := d.ext.check(); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, dst := range dests {
		if u, ok := dst.(interface{ useStore(store.Store) }); ok {
			u.useStore(st) // such as Slack, which remembers its messages there
		}
		if dst == nil || dst.Name() == "" {
			return nil, errors.New("notify: a destination has no name")
		}
		if names[dst.Name()] {
			return nil, fmt.Errorf("notify: two destinations are named %q", dst.Name())
		}
		names[dst.Name()] = true
	}
	d.ext.counters(dests)
	if d.retry.Attempts < 1 || d.retry.First <= 0 || d.retry.Max < d.retry.First {
		return nil, fmt.Errorf("notify: retry %+v: give at least 1 attempt and 0 < First <= Max", d.retry)
	}
	return d, nil
}

// Destinations returns the dispatcher's destinations, such as a Slack
// channel whose buttons a server answers (server.WithSlack).
func (d *Dispatcher) Destinations() []Destination { return slices.Clone(d.dests) }

// Wake makes the dispatcher look for due notices now rather than at its next
// poll, as after a run that may have written some.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers due notices until ctx ends. The outcomes of a batch are
// written while the next batch is claimed, so that on SQLite the two share a
// group commit; Run returns once the last batch's outcomes are written.
func (d *Dispatcher) Run(ctx context.Context) {
	tick := time.NewTicker(d.poll)
	defer tick.Stop()
	var settled chan struct{} // closed once the batch before is settled
	defer func() {
		if settled != nil {
			<-settled
		}
	}()
	for {
		for {
			b, err := d.claimAndDeliver(ctx)
			if settled != nil {
				<-settled
				settled = nil
			}
			if err != nil && ctx.Err() == nil {
				d.log.Warn("delivering notifications failed", "err", err)
			}
			if len(b.notices) > 0 {
				done := make(chan struct{})
				settled = done
				go func() {
					defer close(done)
					if err := d.settle(ctx, b); err != nil {
						d.log.Warn("recording notification outcomes failed; they will be delivered again", "err", err)
					}
				}()
			}
			// A claim that took less than a batch took all that was due; what
			// comes due later wakes the dispatcher again.
			if len(b.notices) < claimBatch || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-d.wake:
		}
	}
}

// claimBatch is how many notices one claim takes at most.
const claimBatch = 100

// DeliverDue claims the notices due now (up to a batch of 100), delivers them
// and records the outcomes in one write, and returns how many it attempted.
func (d *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	b, err := d.claimAndDeliver(ctx)
	if err != nil || len(b.notices) == 0 {
		return 0, err
	}
	return len(b.notices), d.settle(ctx, b)
}

// batch is a claimed batch of notices, delivered, with how to settle each
// and why its delivery failed if it did.
type batch struct {
	notices []store.Notice
	settles []store.NoticeSettle
	fails   []error
}

// claimAndDeliver claims the notices due now (up to a batch) and delivers
// them.
func (d *Dispatcher) claimAndDeliver(ctx context.Context) (batch, error) {
	ns, err := d.outbox.ClaimNotices(ctx, store.NoticeClaim{Owner: d.owner, Now: d.now(), TTL: d.claimTTL, Limit: claimBatch})
	if err != nil || len(ns) == 0 {
		return batch{}, err
	}
	var (
		wg      sync.WaitGroup
		next    atomic.Int64 // the index of the next notice to attempt
		settles = make([]store.NoticeSettle, len(ns))
		fails   = make([]error, len(ns))
	)
	// A delivery under way finishes (within its timeout) even when the
	// dispatcher is stopping, so that stopping does not send it twice.
	ctx = context.WithoutCancel(ctx)
	// d.parallel workers take the notices in turn, rather than a goroutine
	// each.
	for range min(d.parallel, len(ns)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ns); i = int(next.Add(1) - 1) {
				settles[i], fails[i] = d.attempt(ctx, ns[i])
			}
		})
	}
	wg.Wait()
	return batch{notices: ns, settles: settles, fails: fails}, nil
}

// settle records the outcomes of a delivered batch in one write, even when
// ctx has ended, and counts them.
func (d *Dispatcher) settle(ctx context.Context, b batch) error {
	if err := d.outbox.SettleNotices(context.WithoutCancel(ctx), b.settles); err != nil {
		return err
	}
	for i, st := range b.settles {
		switch st.State {
		case store.NoticeDelivered:
			d.stats.delivered.Add(1)
		case store.NoticePending:
			d.stats.retrying.Add(1)
		default:
			d.stats.failed.Add(1)
		}
		if d.observe != nil {
			d.observe(Delivery{Notice: b.notices[i], State: st.State, Err: b.fails[i]})
		}
	}
	return nil
}

// attempt delivers one claimed notice and returns how to settle it, and why
// delivery failed if it did; ctx is not cancelled (claimAndDeliver).
func (d *Dispatcher) attempt(ctx context.Context, n store.Notice) (store.NoticeSettle, error) {
	nt := &Notification{Notice: n}
	var failures []error
	if err := readNoticeData(n.Data, &nt.Data); err != nil {
		failures = append(failures, fmt.Errorf("the notice's data cannot be read: %w", err))
	} else {
		nt.InboxURL = d.inboxLink(nt)
		d.ext.first(nt)
	}
	done := slices.Clone(n.DeliveredTo)
	if len(failures) == 0 {
		for _, dst := range d.dests {
			if slices.Contains(done, dst.Name()) || !dst.Wants(nt) {
				continue
			}
			dctx, cancel := context.WithTimeout(ctx, d.timeout)
			err := dst.Deliver(dctx, nt)
			cancel()
			d.ext.delivered(dst.Name(), err)
			if err != nil {
				failures = append(failures, fmt.Errorf("%s: %w", dst.Name(), err))
				continue
			}
			done = append(done, dst.Name())
		}
	}
	now := d.now()
	settle := store.NoticeSettle{ID: n.ID, Owner: d.owner, DeliveredTo: done, At: now, State: store.NoticeDelivered}
	err := errors.Join(failures...)
	if err != nil {
		settle.Error = err.Error()
		if n.Attempts >= d.retry.Attempts {
			settle.State = store.NoticeDead
			d.log.Warn("a notification failed for good; retry it with `interlude notifications retry`", "id", n.ID, "type", n.Type, "thread", n.ThreadID, "attempts", n.Attempts, "err", err)
		} else {
			settle.State, settle.NextAt = store.NoticePending, now.Add(d.retry.wait(n.Attempts))
			d.log.Info("a notification will be tried again", "id", n.ID, "type", n.Type, "thread", n.ThreadID, "attempt", n.Attempts, "next", settle.NextAt, "err", err)
		}
	}
	return settle, err
}

// storedNoticeData is how a notice's payload is read: its question goes into
// a type of the same fields as interlude.Interruption but without its
// UnmarshalJSON, which would take the question's bytes to be checked and
// decoded over again (the field of the shallower depth takes the key).
type storedNoticeData struct {
	graph.NoticeData
	Interrupt *plainInterruption `json:"interrupt,omitempty"`
}

// plainInterruption is interlude.Interruption without its methods.
type plainInterruption interlude.Interruption

// readNoticeData decodes a notice's payload into d as json.Unmarshal does.
// Every notice is read on every attempt, so it is read with the faster
// decoder of github.com/go-json-experiment/json; a payload that one refuses
// (a repeated name, invalid UTF-8, which the runtime never writes) is read
// by encoding/json, whose verdict stands.
func readNoticeData(data []byte, d *graph.NoticeData) error {
	var s storedNoticeData
	if err := jsonv2.Unmarshal(data, &s, jsonv2.MatchCaseInsensitiveNames(true), jsonv1.MatchCaseSensitiveDelimiter(true)); err != nil {
		s = storedNoticeData{}
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
	}
	*d = s.NoticeData
	if s.Interrupt != nil {
		q := (*interlude.Interruption)(s.Interrupt)
		// As interlude.Interruption's UnmarshalJSON has it: null is no value.
		for _, p := range []*json.RawMessage{&q.Value, &q.Schema, &q.State} {
			if string(*p) == "null" {
				*p = nil
			}
		}
		d.Interrupt = q
	}
	return nil
}

// inboxLink is the inbox address of a notification's question, or of its
// thread, or "".
func (d *Dispatcher) inboxLink(n *Notification) string {
	if d.inbox == "" {
		return ""
	}
	base := strings.TrimSuffix(d.inbox, "/") + "/"
	if n.Data.Interrupt != nil {
		return base + "#/q/" + url.PathEscape(n.Notice.ThreadID) + "/" + url.PathEscape(n.Data.Interrupt.ID)
	}
	return base + "#/"
}
