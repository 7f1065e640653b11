package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// EventLog is a log of thread events shared by the server replicas behind one
// load balancer, such as store/postgres's EventLog. Give one to the hub of every
// replica (WithHubLog) and a listener connected to any replica sees the events
// of runs on all of them, each with the same id everywhere: the log's.
type EventLog interface {
	// Publish appends an event of a thread. With wait set it returns once the
	// event and the thread's events published before it are in the log; the
	// hub waits on each run's end event, so a run's events are logged before
	// another run of the thread, on any replica, can log its own.
	Publish(threadID, name string, data []byte, wait bool)
	// Read calls fn with the logged events of the thread whose id is above
	// after, in id order, until fn fails or none are left. A thread's ids rise
	// in the order its events are logged, so a listener that has had the
	// thread's event n misses none of the thread's events if it reads after n.
	Read(ctx context.Context, threadID string, after int64, fn func(id int64, name string, data []byte) error) error
	// Listen calls deliver with every event logged from now on, by any replica,
	// each thread's in increasing id order, until ctx ends. While wanted
	// reports false nobody listens on this replica, and the log may pass over
	// the events logged meanwhile instead of reading them. If the log may have
	// missed events while listeners were waiting for them (its connection to
	// the database broke, say), it calls lost before it delivers more: the hub
	// then ends every stream, and each listener reconnects and catches up from
	// the log.
	Listen(ctx context.Context, wanted func() bool, deliver func(id int64, threadID, name string, data []byte), lost func()) error
	// Last returns the id of the thread's newest logged event, or 0 if it has
	// none: the thread's events logged from then on have higher ids.
	Last(ctx context.Context, threadID string) (int64, error)
	// Ready returns once Listen delivers every event logged from then on. The
	// hub calls it when a listener arrives (wanted then reports true), before
	// the listener is told it is subscribed, so a log may stop listening while
	// nobody listens and start again here.
	Ready(ctx context.Context) error
}

// WithHubLog makes the hub exchange events through log, for several server
// replicas: Publish appends each event to the log instead of sending it to the
// listeners, and the hub feeds its listeners from the log (it calls log.Listen
// until Close), so the listeners of every replica receive the events of every
// replica's runs, numbered by the log. A listener reconnecting with
// Last-Event-ID catches up from the log, not from the hub's memory, so it
// misses nothing the log still keeps, whichever replica it reconnects to.
func WithHubLog(log EventLog) HubOption {
	return func(h *EventHub) { h.elog = log }
}

// startListening feeds the hub from its log until Close.
func (h *EventHub) startListening() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		wanted := func() bool { return h.subscribers.Load() > 0 }
		h.elog.Listen(ctx, wanted, func(id int64, threadID, name string, data []byte) {
			h.fanOut(threadID, hubEvent{id: id, name: name, data: data})
		}, h.endStreams)
	})
	h.stopListen = func() { cancel(); wg.Wait() }
}

// ready returns once the hub's log delivers every event logged from now on
// (EventLog.Ready); a hub without a log is always ready. If the log does not
// get there in time, the listener is told to come back.
func (h *EventHub) ready(ctx context.Context) error {
	if h.elog == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.elog.Ready(ctx); err != nil {
		return logUnreachable(err)
	}
	return nil
}

// logUnreachable is the answer to a listener when the event log fails it.
func logUnreachable(err error) error {
	return &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable,
		message: "the event log is not reachable right now; subscribe again shortly: " + err.Error()}
}

// listenLogged serves GET /v1/threads/{id}/events on a hub with a log. It
// subscribes first and then, if the listener gave a Last-Event-ID, replays the
// logged events after it; the live events the replay already covered are
// skipped, so none is lost or sent twice between the two.
func (s *Server) listenLogged(w http.ResponseWriter, r *http.Request, threadID string, replay bool, after int64) {
	sub, _, _ := s.hub.subscribe(threadID, 0)
	if sub == nil {
		s.writeError(w, r, errShuttingDown)
		return
	}
	defer s.hub.unsubscribe(threadID, sub)
	if err := s.hub.ready(r.Context()); err != nil {
		s.writeError(w, r, err)
		return
	}
	var ew *eventWriter
	seen := after
	if replay {
		// Read the first page before answering, so that a failing log is an
		// error status rather than a stream that ends at once.
		var pending []hubEvent
		errStop := errors.New("stop")
		err := s.hub.elog.Read(r.Context(), threadID, after, func(id int64, name string, data []byte) error {
			if ew == nil {
				if len(pending) < 64 {
					pending = append(pending, hubEvent{id: id, name: name, data: data})
					return nil
				}
				ew = s.openLogged(w, threadID, pending)
			}
			ew.sendID(name, data, id)
			seen = id
			if ew.broken {
				return errStop
			}
			return nil
		})
		if ew == nil {
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			ew = s.openLogged(w, threadID, pending)
		}
		if len(pending) > 0 && pending[len(pending)-1].id > seen {
			seen = pending[len(pending)-1].id
		}
		if err != nil && !errors.Is(err, errStop) {
			// The stream is open: end it, and let the listener reconnect with
			// the id of the last event it got.
			s.log.Warn("event replay failed", "thread", threadID, "err", err)
			return
		}
	} else {
		// Every event of the thread logged after this read has a higher id,
		// so a listener that reconnects with it misses nothing.
		pos, err := s.hub.elog.Last(r.Context(), threadID)
		if err != nil {
			s.writeError(w, r, logUnreachable(err))
			return
		}
		ew = s.openLogged(w, threadID, nil)
		ew.position(pos)
	}
	follow(ew, r, sub, seen)
}

// openLogged starts the event stream and sends the events read so far.
func (s *Server) openLogged(w http.ResponseWriter, threadID string, first []hubEvent) *eventWriter {
	ew := s.newEventWriter(w, true)
	ew.comment("subscribed to thread " + threadID)
	for _, ev := range first {
		ew.sendID(ev.name, ev.data, ev.id)
	}
	return ew
}
