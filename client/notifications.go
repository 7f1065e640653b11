package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/wire"
)

// NotificationOptions select a page of the delivery log.
type NotificationOptions struct {
	// State keeps only notifications in this state (pending, delivered,
	// failed), if set.
	State store.NoticeState
	// Limit caps the page (the server's default is 50).
	Limit int
	// Before continues a listing: NextBefore of the page before.
	Before int64
}

// NotificationPage is a page of the delivery log, newest first.
type NotificationPage = wire.NotificationPage

// Notifications returns a page of the server's delivery log (GET
// /v1/notifications).
func (c *Client) Notifications(ctx context.Context, opt NotificationOptions) (*NotificationPage, error) {
	q := url.Values{}
	if opt.State != "" {
		q.Set("state", string(opt.State))
	}
	if opt.Limit > 0 {
		q.Set("limit", strconv.Itoa(opt.Limit))
	}
	if opt.Before > 0 {
		q.Set("before", strconv.FormatInt(opt.Before, 10))
	}
	var p NotificationPage
	if err := c.call(ctx, http.MethodGet, "/v1/notifications", q, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// RetryNotification tries a notification whose delivery failed for good
// again (POST /v1/notifications/{id}/retry; admin only).
func (c *Client) RetryNotification(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodPost, "/v1/notifications/"+url.PathEscape(id)+"/retry", nil, nil, nil)
}
