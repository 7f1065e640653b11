package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Config is a notification configuration file (`interlude serve --notify
// FILE`), in JSON:
//
//	{
//	  "inbox_url": "https://interlude.example.com/inbox/",
//	  "retry": {"attempts": 8, "first": "10s", "max": "10m"},
//	  "webhooks": [
//	    {"name": "ops", "url": "https://ops.example.com/hooks/interlude", "secret": "whsec_...",
//	     "graphs": ["refund"], "reasons": ["tool_approval"], "types": ["interrupt.raised"]}
//	  ],
//	  "slack": {"bot_token": "xoxb-...", "signing_secret": "...", "channel": "C0123456789",
//	            "users": {"U0123ABCD": "alice"}, "reasons": ["tool_approval"]}
//	}
//
// Every field but the webhooks' url and secret, and the Slack channel's
// bot_token, signing_secret and channel, may be left out.
type Config struct {
	// InboxURL is the web inbox's address, for links (WithInboxURL).
	InboxURL string `json:"inbox_url,omitempty"`
	// Retry is the retry policy; unset fields keep DefaultRetry's.
	Retry *RetryConfig `json:"retry,omitempty"`
	// Webhooks are the webhook endpoints and the notifications each takes.
	Webhooks []WebhookConfig `json:"webhooks"`
	// Slack is a Slack channel questions are posted to, with buttons to
	// answer them (see SlackConfig).
	Slack *SlackConfig `json:"slack,omitempty"`
}

// RetryConfig is Retry as a configuration file writes it, with durations
// such as "10s".
type RetryConfig struct {
	Attempts int    `json:"attempts,omitempty"`
	First    string `json:"first,omitempty"`
	Max      string `json:"max,omitempty"`
}

// LoadConfig reads a configuration file. Unknown fields are refused, so that
// a misspelt route does not silently send everything everywhere.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("notify: read the notification config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("notify: %s: %w", path, err)
	}
	if len(c.Webhooks) == 0 && c.Slack == nil {
		return nil, fmt.Errorf("notify: %s names no webhook and no Slack channel; add one to \"webhooks\" or \"slack\"", path)
	}
	return &c, nil
}

// Destinations returns the destinations the configuration names.
func (c *Config) Destinations() ([]Destination, error) {
	var out []Destination
	for _, w := range c.Webhooks {
		hook, err := NewWebhook(w, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, hook)
	}
	if c.Slack != nil {
		sl, err := NewSlack(*c.Slack, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, sl)
	}
	return out, nil
}

// Options returns the dispatcher options the configuration sets.
func (c *Config) Options() ([]Option, error) {
	var opts []Option
	if c.InboxURL != "" {
		opts = append(opts, WithInboxURL(c.InboxURL))
	}
	if r := c.Retry; r != nil {
		retry := DefaultRetry
		if r.Attempts != 0 {
			retry.Attempts = r.Attempts
		}
		for _, d := range []struct {
			s   string
			dst *time.Duration
		}{{r.First, &retry.First}, {r.Max, &retry.Max}} {
			if d.s == "" {
				continue
			}
			v, err := time.ParseDuration(d.s)
			if err != nil {
				return nil, fmt.Errorf("notify: retry duration %q: %w", d.s, err)
			}
			*d.dst = v
		}
		opts = append(opts, WithRetry(retry))
	}
	return opts, nil
}
