package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net/mail"
	"slices"
	"strings"
	texttemplate "text/template"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/interludehq/interlude/store"
)

// EmailConfig describes a mail destination: the SMTP server it sends
// through, and the people it writes to, by identity (the names of API tokens,
// which questions name as assignees) and by group.
//
// A question that names assignees is mailed only to those of them the
// configuration has an address for (a group to each of its members); one that
// names none goes to To. One-click answer links (Links) are bound to each
// recipient, so every recipient gets a mail of their own.
type EmailConfig struct {
	// Name names it in the delivery log (default "email").
	Name string `json:"name,omitempty"`
	// SMTP is the server mail is sent through.
	SMTP SMTPConfig `json:"smtp"`
	// From is the sender's address, such as "Interlude <interlude@example.com>".
	From string `json:"from"`
	// People maps identities to their addresses.
	People map[string]string `json:"people"`
	// Groups maps group names to the identities in them.
	Groups map[string][]string `json:"groups,omitempty"`
	// To names the people and groups who are mailed the questions that name
	// no assignee; empty means nobody.
	To []string `json:"to,omitempty"`
	// Route selects the notifications mailed. Without Types, only raised
	// questions and escalations are (not every answer).
	Route
}

// SMTPConfig is how to reach an SMTP server.
type SMTPConfig struct {
	// Host and Port are the server's address (default port 587).
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
	// Username and Password log in (SMTP AUTH PLAIN), if set.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// TLS is "starttls" (the default: STARTTLS is required), "tls" (TLS from
	// the first byte, as on port 465), or "none" (plain text, for a relay on
	// the same machine).
	TLS string `json:"tls,omitempty"`
}

// Email mails notifications through an SMTP server: a text and an HTML part
// with the question, the link to it in the inbox and, for an approval, the
// one-click links to approve or reject it (see MailLinks).
type Email struct {
	name   string
	cfg    EmailConfig
	from   string
	links  *MailLinks
	client func() (*gomail.Client, error)
}

// NewEmail returns the mail destination cfg describes. links, if not nil,
// adds one-click answer links to approval questions.
func NewEmail(cfg EmailConfig, links *MailLinks) (*Email, error) {
	if cfg.SMTP.Host == "" {
		return nil, errors.New("notify: email: give the SMTP server's host (smtp.host)")
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("notify: email: the sender %q is not a mail address: %w", cfg.From, err)
	}
	for who, addr := range cfg.People {
		if _, err := mail.ParseAddress(addr); err != nil {
			return nil, fmt.Errorf("notify: email: the address of %s, %q, is not a mail address: %w", who, addr, err)
		}
	}
	for g, members := range cfg.Groups {
		for _, m := range members {
			if _, ok := cfg.People[m]; !ok {
				return nil, fmt.Errorf("notify: email: group %s names %s, who has no address in \"people\"", g, m)
			}
		}
	}
	if err := cfg.Route.check(); err != nil {
		return nil, fmt.Errorf("notify: email: %w", err)
	}
	if len(cfg.Types) == 0 {
		cfg.Types = []string{store.NoticeRaised, store.NoticeEscalated}
	}
	port := cfg.SMTP.Port
	if port == 0 {
		port = 587
	}
	opts := []gomail.Option{gomail.WithPort(port), gomail.WithTimeout(30 * time.Second)}
	switch cfg.SMTP.TLS {
	case "", "starttls":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "tls":
		opts = append(opts, gomail.WithSSL())
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		return nil, fmt.Errorf("notify: email: smtp.tls %q is not one of starttls, tls, none", cfg.SMTP.TLS)
	}
	if cfg.SMTP.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain), gomail.WithUsername(cfg.SMTP.Username), gomail.WithPassword(cfg.SMTP.Password))
	}
	name := cfg.Name
	if name == "" {
		name = "email"
	}
	if links != nil {
		links.people(cfg)
	}
	host := cfg.SMTP.Host
	return &Email{name: name, cfg: cfg, from: from.String(), links: links,
		client: func() (*gomail.Client, error) { return gomail.NewClient(host, opts...) }}, nil
}

// Name implements Destination.
func (e *Email) Name() string { return e.name }

// Wants implements Destination: the notification passes the route and is
// addressed to someone this destination has an address for.
func (e *Email) Wants(n *Notification) bool {
	return e.cfg.Route.Wants(n) && len(e.recipients(n)) > 0
}

// recipient is one person a mail goes to.
type recipient struct {
	who, addr string
}

// recipients returns who a notification is mailed to: for an escalation,
// the people and groups it notifies or reassigns the question to; for a question that names assignees,
// those of them known here; otherwise To.
func (e *Email) recipients(n *Notification) []recipient {
	var names []string
	switch {
	case n.Data.Escalation != nil:
		names = append(slices.Clone(n.Data.Escalation.Notify), n.Data.Escalation.ReassignTo...)
	case n.Data.Interrupt != nil && len(n.Data.Interrupt.Assignees) > 0:
		names = n.Data.Interrupt.Assignees
	default:
		names = e.cfg.To
	}
	var out []recipient
	add := func(who string) {
		addr, ok := e.cfg.People[who]
		if !ok || slices.ContainsFunc(out, func(r recipient) bool { return r.who == who }) {
			return
		}
		out = append(out, recipient{who, addr})
	}
	for _, name := range names {
		add(name)
		for _, m := range e.cfg.Groups[name] {
			add(m)
		}
	}
	return out
}

// Deliver implements Destination: one mail to each recipient, sent over one
// connection. A failure sends them all again on the next attempt; their
// Message-ID, the same each time, lets a mail client drop the repeats.
func (e *Email) Deliver(ctx context.Context, n *Notification) error {
	var msgs []*gomail.Msg
	for _, r := range e.recipients(n) {
		m, err := e.message(n, r)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	return c.DialAndSendWithContext(ctx, msgs...)
}

// mailView is what the mail templates show.
type mailView struct {
	Graph, Thread, Message, Reason string
	Assignees                      string
	Escalated                      bool
	Value                          string
	InboxURL                       string
	Approve, Reject                string
	Expires                        string
}

// message builds the mail of n to r.
func (e *Email) message(n *Notification, r recipient) (*gomail.Msg, error) {
	v := mailView{Graph: n.Notice.Graph, Thread: n.Notice.ThreadID, InboxURL: n.InboxURL, Escalated: n.Data.Escalation != nil}
	subject := fmt.Sprintf("[%s] ", n.Notice.Graph)
	if q := n.Data.Interrupt; q != nil {
		v.Message, v.Reason, v.Assignees = q.Message, q.Reason, strings.Join(q.Assignees, ", ")
		if len(q.Value) > 0 && string(q.Value) != "null" {
			v.Value = string(q.Value)
		}
		if q.ExpiresAt != nil {
			v.Expires = q.ExpiresAt.UTC().Format(time.RFC1123)
		}
		if n.Notice.Type == store.NoticeRaised || n.Data.Escalation != nil {
			if e.links != nil && simpleApproval(q) {
				var err error
				if v.Approve, v.Reject, err = e.links.pair(n, r.who); err != nil {
					return nil, err
				}
			}
		}
		subject += oneLine(q.Message, 120)
	} else {
		subject += "thread " + n.Notice.ThreadID + " failed"
		v.Message = n.Data.Error
	}
	if n.Data.Escalation != nil {
		subject = "Still waiting: " + subject
	}
	var text, html bytes.Buffer
	if err := mailText.Execute(&text, v); err != nil {
		return nil, err
	}
	if err := mailHTML.Execute(&html, v); err != nil {
		return nil, err
	}
	m := gomail.NewMsg()
	if err := m.From(e.from); err != nil {
		return nil, err
	}
	if err := m.To(r.addr); err != nil {
		return nil, fmt.Errorf("the address of %s: %w", r.who, err)
	}
	m.Subject(subject)
	m.SetDateWithValue(n.Notice.CreatedAt)
	m.SetMessageIDWithValue(n.Notice.ID + "." + r.who + "@interlude")
	m.SetGenHeader(gomail.HeaderXAutoResponseSuppress, "All")
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetBodyString(gomail.TypeTextPlain, text.String())
	m.AddAlternativeString(gomail.TypeTextHTML, html.String())
	return m, nil
}

// oneLine shortens s to one line of at most max runes, for a subject.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

var mailText = texttemplate.Must(texttemplate.New("text").Parse(`{{if .Escalated}}This question is still waiting for an answer.

{{end}}{{.Message}}

Graph: {{.Graph}}
Thread: {{.Thread}}
{{if .Reason}}Reason: {{.Reason}}
{{end}}{{if .Assignees}}For: {{.Assignees}}
{{end}}{{if .Expires}}Expires: {{.Expires}}
{{end}}{{if .Value}}
{{.Value}}
{{end}}{{if .Approve}}
Approve: {{.Approve}}
Reject: {{.Reject}}
(Each link asks you to confirm, and works once.)
{{end}}{{if .InboxURL}}
Open it in the inbox: {{.InboxURL}}
{{end}}`))

var mailHTML = htmltemplate.Must(htmltemplate.New("html").Parse(`<!doctype html>
<html><body style="font-family: sans-serif">
{{if .Escalated}}<p><strong>This question is still waiting for an answer.</strong></p>
{{end}}<p style="font-size: 1.1em">{{.Message}}</p>
<table>
<tr><td>Graph</td><td>{{.Graph}}</td></tr>
<tr><td>Thread</td><td>{{.Thread}}</td></tr>
{{if .Reason}}<tr><td>Reason</td><td>{{.Reason}}</td></tr>{{end}}
{{if .Assignees}}<tr><td>For</td><td>{{.Assignees}}</td></tr>{{end}}
{{if .Expires}}<tr><td>Expires</td><td>{{.Expires}}</td></tr>{{end}}
</table>
{{if .Value}}<pre>{{.Value}}</pre>{{end}}
{{if .Approve}}<p><a href="{{.Approve}}">Approve</a> &nbsp; <a href="{{.Reject}}">Reject</a><br>
<small>Each link asks you to confirm, and works once.</small></p>{{end}}
{{if .InboxURL}}<p><a href="{{.InboxURL}}">Open it in the inbox</a></p>{{end}}
</body></html>
`))
