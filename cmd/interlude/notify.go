package main

import (
	"log/slog"
	"net"
	"strings"

	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
)

// notifyFlags are serve's notification flags.
type notifyFlags struct {
	webhook, secret, file, inbox string
	slack                        slackFlags
}

// config returns the notification configuration the flags give, or nil for
// none. A mistake in the flags is a usage error; one in reading the --notify
// file, or in what it says, is not.
func (f notifyFlags) config(addr string, tls bool) (*notify.Config, error) {
	var c *notify.Config
	switch {
	case f.webhook != "" && f.file != "":
		return nil, usagef("give --webhook or --notify, not both")
	case f.webhook != "":
		if f.secret == "" {
			return nil, usagef("--webhook needs --webhook-secret (or $INTERLUDE_WEBHOOK_SECRET): whsec_ and the key in base64")
		}
		c = &notify.Config{Webhooks: []notify.WebhookConfig{{URL: f.webhook, Secret: f.secret}}}
	case f.file != "":
		var err error
		if c, err = notify.LoadConfig(f.file); err != nil {
			return nil, err
		}
	case f.secret != "":
		return nil, usagef("--webhook-secret needs --webhook")
	}
	c, err := f.slack.apply(c)
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	if c == nil {
		return nil, nil
	}
	switch {
	case f.inbox != "":
		c.InboxURL = strings.TrimSuffix(f.inbox, "/") + "/inbox/"
	case c.InboxURL == "":
		if a, err := net.ResolveTCPAddr("tcp", addr); err == nil {
			c.InboxURL = inboxURL(a, tls)
		}
	}
	if _, err := c.Destinations(); err != nil {
		if f.file == "" {
			return nil, &usageError{err.Error()}
		}
		return nil, err
	}
	return c, nil
}

// dispatcher returns the dispatcher of st's outbox that c describes.
func dispatcher(st store.Store, c *notify.Config, log *slog.Logger) (*notify.Dispatcher, error) {
	dests, err := c.Destinations()
	if err != nil {
		return nil, err
	}
	opts, err := c.Options()
	if err != nil {
		return nil, err
	}
	return notify.New(st, dests, append(opts, notify.WithLogger(log))...)
}
