package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/store"
)

// receiver is the webhook endpoint of -webhook, in this process: it counts how
// often each notice id (the webhook-id header) arrives, so that the run can
// tell notices delivered twice or never. It does not check signatures, which
// would only add to the load generator's CPU.
type receiver struct {
	url, secret string
	mu          sync.Mutex
	seen        map[string]int
}

// startReceiver listens on a free loopback port.
func startReceiver() *receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("%v", err)
	}
	key := make([]byte, 24)
	rand.Read(key)
	r := &receiver{url: "http://" + ln.Addr().String() + "/hook", secret: "whsec_" + base64.StdEncoding.EncodeToString(key), seen: map[string]int{}}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		id := req.Header.Get("webhook-id")
		r.mu.Lock()
		r.seen[id]++
		r.mu.Unlock()
	}))
	return r
}

// drain waits until the servers have no notice left to deliver (none pending),
// for at most limit, and returns how long that took.
func drain(ctx context.Context, c *roundRobin, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		p, err := c.pick().Notifications(ctx, client.NotificationOptions{State: store.NoticePending, Limit: 1})
		if err != nil {
			return 0, err
		}
		if len(p.Notifications) == 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("notices still pending after %s", limit)
		}
		time.Sleep(10 * time.Millisecond) // polling the servers' delivery log; nothing to wait on in this process
	}
}

// check compares the servers' delivery log with what the receiver got: how
// many notices the runs wrote, how many of them arrived, how many arrived
// more than once, how many never did, and how many ids arrived that the log
// does not hold.
func (r *receiver) check(ctx context.Context, c *roundRobin) (string, error) {
	written := map[string]bool{}
	var before int64
	for {
		p, err := c.pick().Notifications(ctx, client.NotificationOptions{Limit: 1000, Before: before})
		if err != nil {
			return "", err
		}
		for _, n := range p.Notifications {
			written[n.ID] = true
		}
		if p.NextBefore == nil {
			break
		}
		before = *p.NextBefore
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var arrived, twice, missing, unknown int
	for id, k := range r.seen {
		if !written[id] {
			unknown++
			continue
		}
		arrived++
		if k > 1 {
			twice++
		}
	}
	for id := range written {
		if r.seen[id] == 0 {
			missing++
		}
	}
	return fmt.Sprintf("%d notices written, %d received, %d received more than once, %d missing, %d unknown ids", len(written), arrived, twice, missing, unknown), nil
}
