package server

import (
	"context"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/notify"
)

// WithSlack serves the interactivity requests of sl's Slack app (its buttons
// and rejection form) at POST /v1/slack/interactions, which is the Request
// URL to give the app. The route takes no bearer token: Slack signs each
// request, and sl verifies the signature. A Slack user answers as the
// Interlude name sl maps them to: with tokens, that name must be a token's
// with the approve or admin role, whose groups the check of a question's
// assignees uses. Give sl to the dispatcher too (WithNotifier), so that
// questions are posted and their messages updated.
func WithSlack(sl *notify.Slack) Option { return func(c *config) { c.slack = sl } }

// slackAnswer answers a decision made in Slack through the host, as the
// person it names.
func (s *Server) slackAnswer(ctx context.Context, d notify.Decision) (*interlude.Resolution, error) {
	who, err := s.keys.Approver(d.Name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer context.AfterFunc(s.runCtx, cancel)()
	defer cancel()
	res, err := s.host.Invoke(interlude.WithAnswerer(ctx, who.Answerer()), d.ThreadID, "", graph.Resume(d.Resolution.For(d.InterruptID)))
	if res == nil || (err != nil && res.Status != interlude.RunFailed) {
		return nil, err // refused; a run that failed after taking the answer took it
	}
	if len(res.Replays) > 0 {
		prev := res.Replays[0]
		return &prev, nil
	}
	return nil, nil
}
