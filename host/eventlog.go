package host

import (
	"context"
	"sync"
	"time"

	"github.com/interludehq/interlude/internal/options"
)

// EventLog is a log of thread events shared by the processes (server
// replicas behind one load balancer, say) that run threads of one store, such
// as store/postgres's EventLog. Give one to the hub of every process
// (WithHubLog) and a listener subscribed on any of them sees the events of
// runs on all of them, each with the same id everywhere: the log's.
type EventLog interface {
	// Publish appends an event of a thread. With wait set it returns once the
	// event and the thread's events published before it are in the log; the
	// hub waits on each run's end event, so a run's events are logged before
	// another run of the thread, in any process, can log its own.
	Publish(threadID, name string, data []byte, wait bool)
	// Read calls fn with the logged events of the thread whose id is above
	// after, in id order, until fn fails or none are left. A thread's ids rise
	// in the order its events are logged, so a listener that has had the
	// thread's event n misses none of the thread's events if it reads after n.
	Read(ctx context.Context, threadID string, after int64, fn func(id int64, name string, data []byte) error) error
	// Listen calls deliver with every event logged from now on, by any
	// process, each thread's in increasing id order, until ctx ends. While
	// wanted reports false nobody listens in this process, and the log may
	// pass over the events logged meanwhile instead of reading them. If the
	// log may have missed events while listeners were waiting for them (its
	// connection to the database broke, say), it calls lost before it
	// delivers more: the hub then ends every stream, and each listener
	// subscribes again and catches up from the log.
	Listen(ctx context.Context, wanted func() bool, deliver func(id int64, threadID, name string, data []byte), lost func()) error
	// Last returns the id of the thread's newest logged event, or 0 if it has
	// none: the thread's events logged from then on have higher ids.
	Last(ctx context.Context, threadID string) (int64, error)
	// Ready returns once Listen delivers every event logged from then on. The
	// hub calls it when a listener arrives (wanted then reports true), before
	// the subscription is returned, so a log may stop listening while nobody
	// listens and start again here.
	Ready(ctx context.Context) error
}

// WithHubLog makes the hub exchange events through log, for several
// processes: Publish appends each event to the log instead of sending it to
// the listeners, and the hub feeds its listeners from the log (it calls
// log.Listen until Close), so the listeners of every process receive the
// events of every process's runs, numbered by the log. A subscription that
// replays reads the log, not the hub's memory, so it misses nothing the log
// still keeps, whichever process it subscribes to.
func WithHubLog(log EventLog) HubOption {
	return func(c *hubConfig) {
		options.Set(&c.Problems, &c.elog, log, log != nil, "host.WithHubLog", "the event log is nil; leave the option out for a hub of this process alone")
	}
}

// startListening feeds the hub from its log until Close.
func (h *Hub) startListening() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		wanted := func() bool { return h.subscribers.Load() > 0 }
		h.elog.Listen(ctx, wanted, func(id int64, threadID, name string, data []byte) {
			h.fanOut(Event{ID: id, ThreadID: threadID, Name: name, Data: data})
		}, h.endStreams)
	})
	h.stopListen = func() { cancel(); wg.Wait() }
}

// ready returns once the hub's log delivers every event logged from now on
// (EventLog.Ready); a hub without a log is always ready. If the log does not
// get there in time, the listener is told to come back.
func (h *Hub) ready(ctx context.Context) error {
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
