package notify

import (
	"errors"
	"strings"
)

// Links returns the one-click answer links the configuration turns on
// (mail_links), or nil: the same value each call, for the mail destinations
// and for the server that serves the links (server.WithMailLinks). Without a
// url, the links are served next to the inbox (inbox_url's /inbox/ becomes
// /mail/).
func (c *Config) Links() (*MailLinks, error) {
	if c.MailLinks == nil || c.links != nil {
		return c.links, nil
	}
	cfg := *c.MailLinks
	if cfg.URL == "" {
		base, ok := strings.CutSuffix(strings.TrimSuffix(c.InboxURL, "/"), "/inbox")
		if !ok {
			return nil, errors.New("notify: mail_links needs a url, or an inbox_url ending in /inbox/ to serve them beside")
		}
		cfg.URL = base + "/mail/"
	}
	l, err := NewMailLinks(cfg, nil)
	if err != nil {
		return nil, err
	}
	c.links = l
	return l, nil
}

// emails returns the mail destinations the configuration names.
func (c *Config) emails() ([]Destination, error) {
	links, err := c.Links()
	if err != nil {
		return nil, err
	}
	var out []Destination
	for _, e := range c.Emails {
		d, err := NewEmail(e, links)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
