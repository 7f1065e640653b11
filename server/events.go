package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/vocab"
	"github.com/interludehq/interlude/server/internal/eventstream"
)

// metadataData opens a stream.
type metadataData struct {
	ThreadID   string `json:"thread_id"`
	Graph      string `json:"graph,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	Checkpoint int64  `json:"checkpoint"`
}

// pauseData is the updates event of a pause.
type pauseData struct {
	Status     string                  `json:"status"`
	Node       string                  `json:"node"`
	Interrupt  *interlude.Interruption `json:"interrupt,omitempty"`
	Breakpoint *graph.Breakpoint       `json:"breakpoint,omitempty"`
}

// subTaskData reports a sub-task (an agent's tool call) that finished while its
// step may still wait.
type subTaskData struct {
	Node string `json:"node"`
	graph.SubTaskResult
}

// liveEndData closes a run in the live thread events, which carry no values.
type liveEndData struct {
	ThreadID   string              `json:"thread_id"`
	Status     interlude.RunStatus `json:"status"`
	Checkpoint int64               `json:"checkpoint"`
}

// payload encodes the events that read the same in a run stream and in the
// live events; it reports false for metadata and end, which each words itself.
func payload(e graph.Event) (string, []byte, bool) {
	switch e.Type {
	case graph.EventUpdate:
		upd := e.Update
		if len(upd) == 0 {
			upd = json.RawMessage("{}")
		}
		data := make([]byte, 0, len(e.Node)+len(upd)+8)
		data = jsonappend.String(append(data, '{'), e.Node)
		data = append(append(append(data, ':'), upd...), '}')
		return "updates", data, true
	case graph.EventInterrupt:
		if e.Interrupt == nil {
			return "", nil, false
		}
		q := shown(*e.Interrupt)
		if data, ok := appendPause(nil, &q); ok {
			return "updates", data, true
		}
		data, err := json.Marshal(pauseData{Status: "interrupted", Node: q.Node, Interrupt: &q})
		return "updates", data, err == nil
	case graph.EventBreakpoint:
		data, err := json.Marshal(pauseData{Status: "interrupted", Node: e.Node, Breakpoint: e.Breakpoint})
		return "updates", data, err == nil
	case graph.EventMessage, graph.EventCustom:
		data, err := json.Marshal(e.Data)
		return string(e.Type), data, err == nil
	case graph.EventSubTask:
		if e.SubTask == nil {
			return "", nil, false
		}
		data, err := json.Marshal(subTaskData{Node: e.Node, SubTaskResult: *e.SubTask})
		return string(e.Type), data, err == nil
	}
	return "", nil, false
}

// appendPause appends the updates event of a pause at question q as
// json.Marshal writes pauseData{"interrupted", q.Node, &q}, with the question
// written by vocab.AppendInterruption rather than by its MarshalJSON and then
// compacted again; it reports false where AppendInterruption does.
func appendPause(b []byte, q *interlude.Interruption) ([]byte, bool) {
	if b == nil {
		b = make([]byte, 0, 320+len(q.Node)+len(q.Message)+len(q.Value)+len(q.Schema))
	}
	b = append(b, `{"status":"interrupted","node":`...)
	b = jsonappend.String(b, q.Node)
	b = append(b, `,"interrupt":`...)
	b, ok := vocab.AppendInterruption(b, q)
	return append(b, '}'), ok
}

// NewEventHub returns an event hub (host.NewHub) whose events read as the
// HTTP API streams them; see WithEventHub.
func NewEventHub(opts ...host.HubOption) (*host.Hub, error) {
	return host.NewHub(append([]host.HubOption{host.WithHubEncoding(encodeLive)}, opts...)...)
}

// encodeLive encodes an event of the live thread events.
func encodeLive(e graph.Event) (string, []byte, bool) {
	switch e.Type {
	case graph.EventMetadata:
		// As json.Marshal writes metadataData{ThreadID, Checkpoint}.
		b := make([]byte, 0, len(e.ThreadID)+48)
		b = append(b, `{"thread_id":`...)
		b = jsonappend.String(b, e.ThreadID)
		b = append(b, `,"checkpoint":`...)
		return "metadata", append(strconv.AppendInt(b, e.Checkpoint, 10), '}'), true
	case graph.EventEnd:
		// As json.Marshal writes liveEndData.
		b := make([]byte, 0, len(e.ThreadID)+len(e.Status)+64)
		b = append(b, `{"thread_id":`...)
		b = jsonappend.String(b, e.ThreadID)
		b = append(b, `,"status":`...)
		b = jsonappend.String(b, string(e.Status))
		b = append(b, `,"checkpoint":`...)
		return "end", append(strconv.AppendInt(b, e.Checkpoint, 10), '}'), true
	}
	return payload(e)
}

// keepAlive is how often an idle event stream sends a comment for proxies.
const keepAlive = 20 * time.Second

var errNoHub = &apiError{status: http.StatusNotImplemented, code: codeNotImplemented,
	message: "this server has no event hub: create one with server.NewEventHub, compile the graphs with graph.WithEvents(hub.Publish) and pass server.WithEventHub(hub)"}

var errShuttingDown = &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable, message: "the server is shutting down"}

// handleEvents serves GET /v1/threads/{id}/events.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if s.hub == nil {
		return errNoHub
	}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	var after int64
	if last != "" {
		if after, err = strconv.ParseInt(strings.TrimSpace(last), 10, 64); err != nil || after < 0 {
			return badRequest("Last-Event-ID", "Last-Event-ID %q is not an event id from this stream", last)
		}
	}
	sub, err := s.hub.Subscribe(r.Context(), id, last != "", after)
	if err != nil {
		return subscribeError(err)
	}
	defer sub.Close()
	ew := eventstream.New(w, true, s.timeouts.Write)
	ew.Comment("subscribed to thread " + id)
	if last == "" {
		ew.Position(sub.Position())
	}
	s.follow(ew, r, sub, false)
	return nil
}

// subscribeError is the answer to a refused subscription.
func subscribeError(err error) error {
	if errors.Is(err, host.ErrHubClosed) {
		return errShuttingDown
	}
	return err
}

// slowConsumer is the error event ending the stream of a listener too far behind.
func slowConsumer(message string) []byte {
	data, _ := json.Marshal(errorObject{Code: codeSlowConsumer, Message: message})
	return data
}

// allData is the data of an event in the feed of every thread.
type allData struct {
	ThreadID string          `json:"thread_id"`
	Data     json.RawMessage `json:"data"`
}

// follow streams the subscription's events until the listener leaves, falls
// behind (and is told so) or the hub ends the stream; with all, each event's
// data names its thread.
func (s *Server) follow(ew *eventstream.Writer, r *http.Request, sub *host.Subscription, all bool) {
	for !ew.Broken() {
		ctx, cancel := context.WithTimeout(r.Context(), keepAlive)
		for !ew.Broken() {
			ev, err := sub.Next(ctx)
			if err == nil {
				data := []byte(ev.Data)
				if all {
					if data, err = json.Marshal(allData{ThreadID: ev.ThreadID, Data: ev.Data}); err != nil {
						continue
					}
				}
				ew.SendID(ev.Name, data, ev.ID)
				continue
			}
			cancel()
			switch {
			case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
				ew.Comment("keep-alive")
			case errors.Is(err, host.ErrFellBehind):
				ew.Send("error", slowConsumer("this listener fell too far behind the thread's events and was disconnected; reconnect with the Last-Event-ID of the last event received to resume"))
				return
			case errors.Is(err, host.ErrStreamEnded), r.Context().Err() != nil:
				return
			default:
				s.log.Warn("event replay failed", "err", err)
				return
			}
			break
		}
		cancel()
	}
}

// handleAllEvents serves GET /v1/events: every thread's live events.
func (s *Server) handleAllEvents(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if _, err := query(r); err != nil {
		return err
	}
	if s.hub == nil {
		return errNoHub
	}
	sub, err := s.hub.SubscribeAll(r.Context())
	if err != nil {
		return subscribeError(err)
	}
	defer sub.Close()
	ew := eventstream.New(w, true, s.timeouts.Write)
	ew.Comment("subscribed to every thread")
	s.follow(ew, r, sub, true)
	return nil
}
