package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"time"

	"github.com/interludehq/interlude/store"
)

// defaultOwner names this process in thread leases.
func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// lease takes the thread's lease when the store is shared between processes and
// keeps renewing it until release is called. If a renewal fails (the lease was
// lost), the returned context is cancelled so the run stops before committing
// more work.
func (g *Graph[S]) lease(ctx context.Context, threadID string) (context.Context, func(), error) {
	l, ok := g.cfg.store.(store.Leaser)
	if !ok {
		return ctx, func() {}, nil
	}
	held, err := l.Lease(ctx, threadID, g.cfg.owner, g.cfg.leaseTTL)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(g.cfg.leaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := held.Renew(ctx); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		<-stopped
		cancel(nil)
		held.Release(context.WithoutCancel(ctx))
	}, nil
}
