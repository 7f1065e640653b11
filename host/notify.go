package host

import (
	"context"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
)

// WithNotifier runs d, the dispatcher of the store's outbox, while the host
// runs (Start to Close), and wakes it after each run, so that the notices the
// run wrote go out at once. Compile the graphs with graph.WithOutbox so that
// they write notices.
func WithNotifier(d *notify.Dispatcher) Option { return func(c *config) { c.notifier = d } }

// Notifier returns the host's dispatcher (WithNotifier), or nil.
func (h *Host) Notifier() *notify.Dispatcher { return h.notifier }

// Notices returns a page of the delivery log: the store's outbox, newest
// first. A store without an outbox is an error matching
// interlude.ErrInvalidRequest.
func (h *Host) Notices(ctx context.Context, q store.NoticeQuery) ([]store.Notice, error) {
	o, err := h.outbox()
	if err != nil {
		return nil, err
	}
	return o.Notices(ctx, q)
}

// RetryNotice makes a notice whose delivery failed for good pending again,
// due now, and wakes the dispatcher.
func (h *Host) RetryNotice(ctx context.Context, id string) error {
	o, err := h.outbox()
	if err != nil {
		return err
	}
	if err := o.RetryNotice(ctx, id, h.now()); err != nil {
		return err
	}
	if h.notifier != nil {
		h.notifier.Wake()
	}
	return nil
}

func (h *Host) outbox() (store.Outbox, error) {
	o, ok := store.As[store.Outbox](h.store)
	if !ok {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "this host's store keeps no outbox, so there are no notifications"}
	}
	return o, nil
}
