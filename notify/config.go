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
//	            "users": {"U0123ABCD": "alice"}, "reasons": ["tool_approval"]},
//	  "emails": [
//	    {"smtp": {"host": "smtp.example.com", "port": 587, "username": "interlude", "password": "..."},
//	     "from": "Interlude <interlude@example.com>",
//	     "people": {"fiona": "fiona@example.com", "olga": "olga@example.com"},
//	     "groups": {"finance": ["fiona"]}, "to": ["olga"]}
//	  ],
//	  "mail_links": {"secret": "at least 32 random bytes", "max_age": "72h"},
//	  "escalations": [
//	    {"graphs": ["refund"], "after": "30m", "notify": ["olga"]},
//	    {"graphs": ["refund"], "after": "2h", "reassign_to": ["finance-leads"]}
//	  ]
//	}
//
// Every field but the webhooks' url and secret, the Slack channel's bot_token,
// signing_secret and channel, and the emails' smtp host and from, may be left
// out; at least one webhook, Slack channel or email is needed.
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
	// Emails are mail destinations (SMTP), each with its people and groups.
	Emails []EmailConfig `json:"emails,omitempty"`
	// MailLinks turns on one-click answer links in approval mails.
	MailLinks *MailLinksConfig `json:"mail_links,omitempty"`
	// Escalations are the escalation policies (see Escalation).
	Escalations []EscalationConfig `json:"escalations,omitempty"`

	links *MailLinks // made once from MailLinks, shared by the mails and the server
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
	if len(c.Webhooks) == 0 && c.Slack == nil && len(c.Emails) == 0 {
		return nil, fmt.Errorf("notify: %s names no destination; add one to \"webhooks\", \"slack\" or \"emails\"", path)
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
	mails, err := c.emails()
	if err != nil {
		return nil, err
	}
	return append(out, mails...), nil
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
	for _, e := range c.Escalations {
		esc, err := e.escalation()
		if err != nil {
			return nil, err
		}
		opts = append(opts, WithEscalations(esc))
	}
	return opts, nil
}
