package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/server/internal/eventstream"
	"github.com/interludehq/interlude/server/internal/jsonbody"
)

// run is one run the server drives for a request.
type run struct {
	g           graph.Erased
	threadID    string
	cmd         graph.Command
	answers     map[string]interlude.Resolution
	granularity granularity
	inputPath   string     // "input" or "messages" for an input command
	held        *host.Held // the thread, held for the run
}

// handleInvoke serves POST /v1/graph/invoke and, with stream set, /v1/graph/stream.
func (s *Server) handleInvoke(stream bool) handler {
	return func(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
		body, err := s.readBody(w, r)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(body)) == 0 {
			body = []byte("{}")
		}
		req, err := parseInvoke(body)
		if err != nil {
			return err
		}
		need, doing := auth.RoleRun, "start or continue threads"
		if req.kind == cmdAnswer {
			need, doing = auth.RoleApprove, "answer interrupts"
		}
		if err := rc.who.Need(need, doing); err != nil {
			return err
		}
		threadID := req.threadID
		if threadID == "" {
			if req.kind != cmdInput {
				return badRequest("config.thread_id", "config.thread_id is required to answer or continue a thread")
			}
			threadID = host.NewID("thr_")
		}
		if err := s.checkInput(req, req.graph, false); err != nil {
			return err
		}
		h, err := s.hold(r.Context(), threadID, req.graph, req.kind == cmdInput)
		if err != nil {
			return err
		}
		defer h.Release()
		if err := s.checkInput(req, h.Graph.Name(), h.Fresh); err != nil {
			return err
		}
		return s.drive(w, r, rc, run{g: h.Graph, threadID: threadID, cmd: req.command(), answers: req.answers, granularity: req.granularity, inputPath: req.inputPath, held: h}, stream)
	}
}

// handleAnswer serves POST /v1/threads/{id}/resume, /reject and /cancel.
func (s *Server) handleAnswer(action string) handler {
	return func(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		body, err := s.readBody(w, r)
		if err != nil {
			return err
		}
		req, err := parseAnswer(body, action)
		if err != nil {
			return err
		}
		h, err := s.hold(r.Context(), id, "", false)
		if err != nil {
			return err
		}
		defer h.Release()
		return s.drive(w, r, rc, run{g: h.Graph, threadID: id, cmd: graph.Respond(req.answers), answers: req.answers, granularity: req.granularity, held: h}, false)
	}
}

// checkInput refuses an input command's fields that graph graphName's state
// lacks, or, creating the thread (fresh), that leave out a required one
// (host.Host.CheckInput).
func (s *Server) checkInput(req *invokeRequest, graphName string, fresh bool) error {
	if req.kind != cmdInput || graphName == "" {
		return nil
	}
	fields, err := req.inputFields()
	if err != nil {
		return err
	}
	return inputRefusal(req.inputPath, s.host.CheckInput(graphName, fields, fresh))
}

// runContext returns the context of a run: it carries the caller to the answers
// and outlives the request (an accepted answer is always acted on) until Close.
func (s *Server) runContext(r *http.Request, who auth.Caller) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	stop := context.AfterFunc(s.runCtx, cancel)
	return interlude.WithAnswerer(ctx, who.Answerer()), func() { stop(); cancel() }
}

// inputRefusal names the input field of an invalid input's refusal: the one its
// violation points at (a JSON Pointer into the input), else the input itself.
func inputRefusal(inputPath string, err error) error {
	var ie *interlude.Error
	if inputPath == "" || !errors.As(err, &ie) || ie.Code != interlude.CodeInvalidRequest {
		return err
	}
	if len(ie.Violations) == 1 && strings.HasPrefix(ie.Violations[0].Path, "/") {
		v := ie.Violations[0]
		base := inputPath
		if base == "messages" { // the pointer starts at messages
			base = ""
		}
		path := jsonbody.FieldPath(base, jsontext.Pointer(v.Path))
		if strings.HasSuffix(ie.Message, v.Message) { // the message says the violation already
			return badRequest(path, "%s %s", path, v.Message)
		}
		return badRequest(path, "%s %s: %s", path, v.Message, ie.Message)
	}
	return badRequest(inputPath, "%s", ie.Message)
}

// failure classifies a run that did not end for the metrics.
func failure(err error) string {
	if ae, _ := toAPIError(err); ae.status < 500 {
		return "refused"
	}
	return "error"
}

func (s *Server) counted(ru *run, outcome string, d time.Duration) {
	s.metrics.Run(ru.g.Name(), outcome, d)
	if outcome != "refused" && outcome != "error" {
		for _, res := range ru.answers {
			s.metrics.Resolution(ru.g.Name(), string(res.Status))
		}
	}
}

// drive runs the command and answers like invoke, or streams it.
func (s *Server) drive(w http.ResponseWriter, r *http.Request, rc *reqCtx, ru run, stream bool) error {
	ctx, cancel := s.runContext(r, rc.who)
	defer cancel()
	if stream {
		return s.stream(w, r, ctx, &ru)
	}
	start := time.Now()
	cmd := ru.cmd
	if ru.granularity == low {
		cmd = cmd.WithoutValues() // the answer leaves them out
	}
	res, err := ru.held.Invoke(ctx, cmd)
	ru.held.Release()
	s.writeDeadline(w) // the run may have outlasted the one set for the request
	if res == nil || (err != nil && res.Status != interlude.RunFailed) {
		if err == nil {
			err = errors.New("the graph returned no result")
		}
		s.counted(&ru, failure(err), time.Since(start))
		return inputRefusal(ru.inputPath, err)
	}
	if err != nil {
		s.logRunFailed(r.Context(), &ru, err)
	}
	s.counted(&ru, string(res.Status), time.Since(start))
	return answer(w, resultAt(res, ru.granularity))
}

// logRunFailed logs a failed run; a node's panic, a bug, as an error with its
// stack, which clients never see.
func (s *Server) logRunFailed(ctx context.Context, ru *run, err error) {
	attrs := []slog.Attr{slog.String("graph", ru.g.Name()), slog.String("thread_id", ru.threadID), slog.String("err", err.Error())}
	if pe, ok := errors.AsType[*graph.PanicError](err); ok {
		s.log.LogAttrs(ctx, slog.LevelError, "run failed: a node panicked", append(attrs, slog.String("stack", string(pe.Stack)))...)
		return
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, "run failed", attrs...)
}

// stream runs the command and answers its events as NDJSON or SSE (docs/API.md),
// the last, end, with invoke's answer; a refused command is an error answer.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, ctx context.Context, ru *run) error {
	sse := prefersSSE(r.Header.Get("Accept"))
	runID := host.NewID("run_")
	start := time.Now()
	var ew *eventstream.Writer
	var end *graph.Event
	var refused, runErr error
	meta := func(checkpoint int64) []byte {
		data, _ := json.Marshal(metadataData{ThreadID: ru.threadID, Graph: ru.g.Name(), RunID: runID, Checkpoint: checkpoint})
		return data
	}
	// The run never waits for the client: one too far behind is cut off.
	open := func() {
		ew = eventstream.New(w, sse, s.timeouts.Write)
		ew.Async(s.streamBuffer, slowConsumer("this client read the stream too slowly and was cut off; the run goes on: read its outcome with GET /v1/threads/"+ru.threadID))
	}
	for e, err := range ru.held.Stream(ctx, ru.cmd) {
		if err != nil {
			if ew == nil {
				refused = err
			} else {
				runErr = err
			}
			continue
		}
		if ew == nil {
			open()
		}
		switch e.Type {
		case graph.EventMetadata:
			ew.Send("metadata", meta(e.Checkpoint))
		case graph.EventEnd:
			end = &e
		default:
			if name, data, ok := payload(e); ok {
				ew.Send(name, data)
			}
		}
	}
	ru.held.Release()
	if refused != nil {
		s.counted(ru, failure(refused), time.Since(start))
		return inputRefusal(ru.inputPath, refused)
	}
	// An identical replay runs nothing: it is answered as the thread reads.
	res, ocErr := host.Outcome(ctx, ru.g, ru.threadID, end)
	oc := res
	if ew == nil {
		open()
		ew.Send("metadata", meta(oc.Checkpoint))
	}
	outcome := string(oc.Status)
	if runErr != nil {
		var ev errorObject
		if end != nil && end.Status == interlude.RunFailed {
			ev = errorObject{Code: "run_failed", Message: oc.Error}
			s.logRunFailed(r.Context(), ru, runErr)
		} else {
			ae, unexpected := toAPIError(runErr)
			if unexpected {
				s.log.ErrorContext(r.Context(), "stream failed", "graph", ru.g.Name(), "thread_id", ru.threadID, "err", runErr)
			}
			if ae.code == string(interlude.CodeThreadBusy) {
				s.logBusy(r, runErr)
			}
			ev, outcome = ae.object(), "error"
		}
		data, _ := json.Marshal(ev)
		ew.Send("error", data)
	}
	if ocErr != nil {
		s.log.ErrorContext(r.Context(), "read the thread after a stream", "graph", ru.g.Name(), "thread_id", ru.threadID, "err", ocErr)
	}
	s.counted(ru, outcome, time.Since(start))
	data, err := json.Marshal(resultAt(oc, ru.granularity))
	if err != nil {
		data, _ = json.Marshal(map[string]any{"thread_id": ru.threadID, "status": oc.Status})
	}
	ew.Send("end", data)
	ew.Finish()
	return nil
}

// prefersSSE reports whether an Accept header asks for SSE over NDJSON: it
// names text/event-stream with a weight above 0 and at least that of
// application/x-ndjson.
func prefersSSE(accept string) bool {
	sse, ndjson := 0.0, -1.0
	for part := range strings.SplitSeq(accept, ",") {
		typ, params, _ := strings.Cut(part, ";")
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(typ)) {
		case "text/event-stream":
			sse = q
		case "application/x-ndjson":
			ndjson = q
		}
	}
	return sse > 0 && sse >= ndjson
}
