package server

import (
	"cmp"
	"net/http"

	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/wire"
)

// WithNotifier runs d, the dispatcher of the store's outbox, in the host the
// server builds (host.WithNotifier); with WithHost, give it to the host
// instead. Compile the graphs with graph.WithOutbox.
func WithNotifier(d *notify.Dispatcher) Option { return func(c *config) { c.notifier = d } }

// handleNotifications serves GET /v1/notifications, the delivery log.
func (s *Server) handleNotifications(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	q, err := query(r, "state", "limit", "before")
	if err != nil {
		return err
	}
	nq := store.NoticeQuery{State: store.NoticeState(q.Get("state"))}
	switch nq.State {
	case "", store.NoticePending, store.NoticeDelivered, store.NoticeDead:
	default:
		return badRequest("state", "state %q is not one of pending, delivered, failed", nq.State)
	}
	limit, err := intParam(q, "limit", 1, 1000)
	if err != nil {
		return err
	}
	if nq.Before, err = intParam(q, "before", 1, 1<<62); err != nil {
		return err
	}
	nq.Limit = int(limit)
	ns, err := s.host.Notices(r.Context(), nq)
	if err != nil {
		return err
	}
	enabled := s.host.Notifier() != nil
	out := wire.NotificationPage{Notifications: ns, Enabled: &enabled}
	if n := len(ns); n > 0 && n == cmp.Or(nq.Limit, 50) {
		next := ns[n-1].Seq
		out.NextBefore = &next
	}
	return answer(w, out)
}

// retried answers POST /v1/notifications/{id}/retry.
type retried struct {
	ID    string            `json:"id"`
	State store.NoticeState `json:"state"`
}

// handleRetryNotification serves POST /v1/notifications/{id}/retry.
func (s *Server) handleRetryNotification(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	id := r.PathValue("id")
	if err := s.host.RetryNotice(r.Context(), id); err != nil {
		return err
	}
	return answer(w, retried{ID: id, State: store.NoticePending})
}
