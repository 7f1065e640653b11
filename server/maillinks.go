package server

import (
	"github.com/interludehq/interlude/notify"
)

// WithMailLinks serves the one-click answer links of approval mails
// (notify.MailLinks) under /mail/, without requiring a token: the signed link
// is the authority, and an answer given through it is recorded as its
// recipient's. Give l the URL https://<server>/mail/.
func WithMailLinks(l *notify.MailLinks) Option { return func(c *config) { c.mailLinks = l } }
