package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/vocab"
	"github.com/interludehq/interlude/store"
)

// outboxCases are the subtests of stores that implement store.Outbox; Run
// skips them for the others.
func (h *harness) outboxCases() []struct {
	name string
	fn   func(*testing.T)
} {
	return []struct {
		name string
		fn   func(*testing.T)
	}{
		{"OutboxNoticesAreWrittenWithTheirAppend", h.outboxWritten},
		{"OutboxNoticesOfARefusedAppendAreNotWritten", h.outboxRefused},
		{"OutboxANoticeIDIsWrittenOnce", h.outboxOnce},
		{"OutboxEachDueNoticeIsClaimedByOneOwner", h.outboxClaimOnce},
		{"OutboxAnExpiredClaimPassesToAnotherOwner", h.outboxClaimExpires},
		{"OutboxSettledStatesAndRetry", h.outboxSettle},
		{"OutboxABatchOfSettlesRecordsEachAsAloneWould", h.outboxSettleBatch},
		{"OutboxANoticeSettledTwiceInABatchTakesTheFirstOutcome", h.outboxSettleTwice},
		{"OutboxASettledNoticeIsNotClaimedAgainAfterARestart", h.outboxSettleRestart},
		{"OutboxLogPagesNewestFirst", h.outboxPages},
		{"OutboxNoticesOutliveTheirThread", h.outboxDeleted},
	}
}

func (h *harness) openOutbox(t *testing.T) (store.Store, store.Outbox) {
	t.Helper()
	s := h.open(t)
	o, ok := s.(store.Outbox)
	if !ok {
		t.Skipf("%T does not implement store.Outbox", s)
	}
	return s, o
}

func notice(id, typ string) store.Notice {
	return store.Notice{ID: id, Graph: "g", Type: typ, InterruptID: "int_" + id,
		Data: json.RawMessage(fmt.Sprintf(`{"id":%q,"text":"<é\u0000>"}`, id)), CreatedAt: base}
}

// appendNotices appends one record to thread id (created when expect is 0)
// carrying the notices.
func appendNotices(t *testing.T, s store.Store, id string, expect int64, ns ...store.Notice) {
	t.Helper()
	appendOK(t, s, store.Append{ThreadID: id, Expect: expect, Meta: store.Meta{Graph: "g", Status: interlude.ThreadInterrupted},
		Records: []store.Record{rec(expect+1, id)}, Outbox: ns})
}

func listNotices(t *testing.T, o store.Outbox, q store.NoticeQuery) []store.Notice {
	t.Helper()
	ns, err := o.Notices(context.Background(), q)
	if err != nil {
		t.Fatalf("Notices(%+v): %v", q, err)
	}
	return ns
}

func noticeIDs(ns []store.Notice) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.ID
	}
	return ids
}

func claim(t *testing.T, o store.Outbox, owner string, now time.Time, limit int) []store.Notice {
	t.Helper()
	ns, err := o.ClaimNotices(context.Background(), store.NoticeClaim{Owner: owner, Now: now, TTL: time.Minute, Limit: limit})
	if err != nil {
		t.Fatalf("ClaimNotices(%s): %v", owner, err)
	}
	return ns
}

func (h *harness) outboxWritten(t *testing.T) {
	s, o := h.openOutbox(t)
	appendNotices(t, s, "t", 0, notice("n1", store.NoticeRaised), notice("n2", store.NoticeFailed))
	got := listNotices(t, o, store.NoticeQuery{})
	if !slices.Equal(noticeIDs(got), []string{"n2", "n1"}) {
		t.Fatalf("Notices = %v, want [n2 n1] (newest first)", noticeIDs(got))
	}
	n := got[1]
	want := notice("n1", store.NoticeRaised)
	if n.ThreadID != "t" || n.Graph != "g" || n.Type != store.NoticeRaised || n.InterruptID != want.InterruptID ||
		!vocab.JSONEqual(n.Data, want.Data) || !n.CreatedAt.Equal(base) {
		t.Fatalf("notice read back as %+v, want %+v on thread t", n, want)
	}
	if n.State != store.NoticePending || n.Attempts != 0 || n.SettledAt != nil || len(n.DeliveredTo) != 0 || !n.NextAt.Equal(base) {
		t.Fatalf("a new notice reads %+v, want pending, due at its creation, no attempt", n)
	}
	if got[0].Seq <= got[1].Seq {
		t.Fatalf("seq %d of the later notice is not above %d", got[0].Seq, got[1].Seq)
	}
}

func (h *harness) outboxRefused(t *testing.T) {
	s, o := h.openOutbox(t)
	appendNotices(t, s, "t", 0)
	err := s.Append(context.Background(), store.Append{ThreadID: "t", Expect: 5, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{rec(6, "x")}, Outbox: []store.Notice{notice("lost", store.NoticeAnswered)}})
	if !errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("stale append = %v, want a conflict", err)
	}
	err = s.Append(context.Background(), store.Append{ThreadID: "u", Meta: store.Meta{Graph: "g"},
		Records: []store.Record{rec(1, "x")}, Outbox: []store.Notice{{ID: "bad", Type: "no.such.type"}}})
	if !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("append with a notice of unknown type = %v, want invalid request", err)
	}
	if got := listNotices(t, o, store.NoticeQuery{}); len(got) != 0 {
		t.Fatalf("refused appends left notices %v", noticeIDs(got))
	}
}

func (h *harness) outboxOnce(t *testing.T) {
	s, o := h.openOutbox(t)
	appendNotices(t, s, "t", 0, notice("same", store.NoticeRaised))
	appendNotices(t, s, "t", 1, notice("same", store.NoticeRaised), notice("other", store.NoticeAnswered))
	if got := noticeIDs(listNotices(t, o, store.NoticeQuery{})); !slices.Equal(got, []string{"other", "same"}) {
		t.Fatalf("Notices = %v, want [other same]", got)
	}
}

func (h *harness) outboxClaimOnce(t *testing.T) {
	s, o := h.openOutbox(t)
	const threads, each = 8, 5
	for i := range threads {
		var ns []store.Notice
		for j := range each {
			ns = append(ns, notice(fmt.Sprintf("n%d_%d", i, j), store.NoticeRaised))
		}
		appendNotices(t, s, fmt.Sprintf("t%d", i), 0, ns...)
	}
	now := base.Add(time.Second)
	var (
		mu   sync.Mutex
		seen = map[string]string{}
		wg   sync.WaitGroup
	)
	for w := range 4 {
		owner := fmt.Sprintf("owner%d", w)
		wg.Go(func() {
			for {
				ns, err := o.ClaimNotices(context.Background(), store.NoticeClaim{Owner: owner, Now: now, TTL: time.Hour, Limit: 3})
				if err != nil {
					t.Errorf("ClaimNotices: %v", err)
					return
				}
				if len(ns) == 0 {
					return
				}
				mu.Lock()
				for _, n := range ns {
					if prev, ok := seen[n.ID]; ok {
						t.Errorf("notice %s claimed by %s and %s", n.ID, prev, owner)
					}
					seen[n.ID] = owner
					if n.Attempts != 1 {
						t.Errorf("claimed notice %s counts %d attempts, want 1", n.ID, n.Attempts)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != threads*each {
		t.Fatalf("%d notices claimed, want %d", len(seen), threads*each)
	}
	if ns := claim(t, o, "late", base.Add(-time.Second), 0); len(ns) != 0 {
		t.Fatalf("notices not due yet were claimed: %v", noticeIDs(ns))
	}
}

func (h *harness) outboxClaimExpires(t *testing.T) {
	s, o := h.openOutbox(t)
	appendNotices(t, s, "t", 0, notice("n", store.NoticeRaised))
	now := base.Add(time.Second)
	if ns := claim(t, o, "a", now, 0); len(ns) != 1 {
		t.Fatalf("first claim took %d notices, want 1", len(ns))
	}
	if ns := claim(t, o, "b", now.Add(30*time.Second), 0); len(ns) != 0 {
		t.Fatalf("a notice under an unexpired claim was claimed again")
	}
	ns := claim(t, o, "b", now.Add(time.Minute), 0)
	if len(ns) != 1 || ns[0].Attempts != 2 {
		t.Fatalf("after the claim expired, b took %+v, want the notice at its second attempt", ns)
	}
	err := o.SettleNotice(context.Background(), store.NoticeSettle{ID: "n", Owner: "a", State: store.NoticeDelivered, At: now})
	if !errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("settling under a lost claim = %v, want a conflict", err)
	}
	if err := o.SettleNotice(context.Background(), store.NoticeSettle{ID: "n", Owner: "b", State: store.NoticeDelivered, DeliveredTo: []string{"hook"}, At: now}); err != nil {
		t.Fatalf("settling under the live claim: %v", err)
	}
	got := listNotices(t, o, store.NoticeQuery{})[0]
	if got.State != store.NoticeDelivered || !slices.Equal(got.DeliveredTo, []string{"hook"}) || got.SettledAt == nil || !got.SettledAt.Equal(now) {
		t.Fatalf("delivered notice reads %+v", got)
	}
	if ns := claim(t, o, "c", now.Add(time.Hour), 0); len(ns) != 0 {
		t.Fatalf("a delivered notice was claimed again")
	}
}

func (h *harness) outboxSettle(t *testing.T) {
	s, o := h.openOutbox(t)
	ctx := context.Background()
	appendNotices(t, s, "t", 0, notice("n", store.NoticeRaised))
	now := base.Add(time.Second)
	claim(t, o, "a", now, 0)
	later := now.Add(10 * time.Second)
	if err := o.SettleNotice(ctx, store.NoticeSettle{ID: "n", Owner: "a", State: store.NoticePending, NextAt: later, Error: "503 from hook", DeliveredTo: []string{"mail"}, At: now}); err != nil {
		t.Fatal(err)
	}
	if ns := claim(t, o, "a", later.Add(-time.Nanosecond), 0); len(ns) != 0 {
		t.Fatalf("a notice retried later was claimed before its time")
	}
	ns := claim(t, o, "a", later, 0)
	if len(ns) != 1 || ns[0].LastError != "503 from hook" || !slices.Equal(ns[0].DeliveredTo, []string{"mail"}) || ns[0].Attempts != 2 {
		t.Fatalf("retried notice claimed as %+v", ns)
	}
	if err := o.SettleNotice(ctx, store.NoticeSettle{ID: "n", Owner: "a", State: store.NoticeDead, Error: "gave up", At: later}); err != nil {
		t.Fatal(err)
	}
	failed := listNotices(t, o, store.NoticeQuery{State: store.NoticeDead})
	if len(failed) != 1 || failed[0].LastError != "gave up" || failed[0].SettledAt == nil {
		t.Fatalf("failed notices = %+v", failed)
	}
	if got := listNotices(t, o, store.NoticeQuery{State: store.NoticePending}); len(got) != 0 {
		t.Fatalf("pending notices = %v, want none", noticeIDs(got))
	}
	if ns := claim(t, o, "a", later.Add(time.Hour), 0); len(ns) != 0 {
		t.Fatalf("a failed notice was claimed")
	}
	if err := o.RetryNotice(ctx, "missing", later); !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("RetryNotice(missing) = %v, want not found", err)
	}
	if err := o.RetryNotice(ctx, "n", later); err != nil {
		t.Fatalf("RetryNotice: %v", err)
	}
	if err := o.RetryNotice(ctx, "n", later); !errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("RetryNotice of a pending notice = %v, want a conflict", err)
	}
	ns = claim(t, o, "b", later, 0)
	if len(ns) != 1 || ns[0].Attempts != 1 || ns[0].State != store.NoticePending {
		t.Fatalf("a retried notice claimed as %+v, want pending at its first attempt", ns)
	}
	if err := o.SettleNotice(ctx, store.NoticeSettle{ID: "missing", Owner: "b", State: store.NoticeDelivered}); !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("SettleNotice(missing) = %v, want not found", err)
	}
	if err := o.SettleNotice(ctx, store.NoticeSettle{ID: "n", Owner: "b", State: "lost"}); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("SettleNotice with an unknown state = %v, want invalid request", err)
	}
}

// outboxSettleRestart settles a batch (which stores may commit without
// waiting for the disk) and restarts the store cleanly: the settled notice
// stays delivered and is not claimed again, and the claimed notice left
// unsettled is claimed again once its claim has expired, its attempt counted.
func (h *harness) outboxSettleRestart(t *testing.T) {
	if h.opts.Reopen == nil {
		t.Skip("the store cannot be reopened (Options.Reopen)")
	}
	s, o := h.openOutbox(t)
	appendNotices(t, s, "t", 0, notice("n1", store.NoticeRaised), notice("n2", store.NoticeAnswered))
	now := base.Add(time.Second)
	if ns := claim(t, o, "a", now, 0); len(ns) != 2 {
		t.Fatalf("claimed %v, want both notices", noticeIDs(ns))
	}
	if err := o.SettleNotices(context.Background(), []store.NoticeSettle{{ID: "n1", Owner: "a", State: store.NoticeDelivered, DeliveredTo: []string{"hook"}, At: now}}); err != nil {
		t.Fatal(err)
	}
	o = h.opts.Reopen(t, s).(store.Outbox)
	ns := claim(t, o, "b", now.Add(time.Hour), 0)
	if len(ns) != 1 || ns[0].ID != "n2" || ns[0].Attempts != 2 {
		t.Fatalf("claimed %+v after the restart, want only n2, at its second attempt", ns)
	}
	got := listNotices(t, o, store.NoticeQuery{State: store.NoticeDelivered})
	if len(got) != 1 || got[0].ID != "n1" || !slices.Equal(got[0].DeliveredTo, []string{"hook"}) || got[0].SettledAt == nil {
		t.Fatalf("delivered notices after the restart = %+v, want n1 delivered to hook", got)
	}
}

func (h *harness) outboxSettleBatch(t *testing.T) {
	s, o := h.openOutbox(t)
	ctx := context.Background()
	appendNotices(t, s, "t", 0, notice("n1", store.NoticeRaised), notice("n2", store.NoticeAnswered), notice("n3", store.NoticeRaised))
	now := base.Add(time.Second)
	if ns := claim(t, o, "a", now, 2); len(ns) != 2 {
		t.Fatalf("claimed %v, want n1 and n2", noticeIDs(ns))
	}
	later := now.Add(time.Minute)
	err := o.SettleNotices(ctx, []store.NoticeSettle{
		{ID: "n1", Owner: "a", State: store.NoticeDelivered, DeliveredTo: []string{"hook"}, At: now},
		{ID: "n2", Owner: "a", State: store.NoticePending, NextAt: later, Error: "503 from hook", At: now},
		{ID: "n3", Owner: "a", State: store.NoticeDelivered, At: now}, // never a's
		{ID: "missing", Owner: "a", State: store.NoticeDelivered, At: now},
	})
	if !errors.Is(err, interlude.ErrConflict) || !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("SettleNotices = %v, want a conflict (n3) and a not found (missing)", err)
	}
	got := map[string]store.Notice{}
	for _, n := range listNotices(t, o, store.NoticeQuery{}) {
		got[n.ID] = n
	}
	if n := got["n1"]; n.State != store.NoticeDelivered || !slices.Equal(n.DeliveredTo, []string{"hook"}) || n.SettledAt == nil {
		t.Errorf("n1 reads %+v, want delivered to hook", n)
	}
	if n := got["n2"]; n.State != store.NoticePending || n.LastError != "503 from hook" || !n.NextAt.Equal(later) {
		t.Errorf("n2 reads %+v, want pending until %s", n, later)
	}
	if n := got["n3"]; n.State != store.NoticePending || n.Attempts != 0 {
		t.Errorf("n3 reads %+v, want untouched", n)
	}
	if ns := claim(t, o, "b", now, 0); !slices.Equal(noticeIDs(ns), []string{"n3"}) {
		t.Errorf("after the batch, b claimed %v, want n3", noticeIDs(ns))
	}
}

func (h *harness) outboxSettleTwice(t *testing.T) {
	s, o := h.openOutbox(t)
	ctx := context.Background()
	appendNotices(t, s, "t", 0, notice("n1", store.NoticeRaised), notice("n2", store.NoticeRaised))
	now := base.Add(time.Second)
	if ns := claim(t, o, "a", now, 0); len(ns) != 2 {
		t.Fatalf("claimed %v, want n1 and n2", noticeIDs(ns))
	}
	err := o.SettleNotices(ctx, []store.NoticeSettle{
		{ID: "n1", Owner: "a", State: store.NoticeDelivered, DeliveredTo: []string{"hook"}, At: now},
		{ID: "n2", Owner: "a", State: store.NoticeDelivered, DeliveredTo: []string{"hook"}, At: now},
		{ID: "n1", Owner: "a", State: store.NoticePending, NextAt: now.Add(time.Minute), Error: "503 from hook", At: now},
	})
	if !errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("SettleNotices with n1 twice = %v, want a conflict for the second", err)
	}
	for _, n := range listNotices(t, o, store.NoticeQuery{}) {
		if n.State != store.NoticeDelivered || n.LastError != "" || !slices.Equal(n.DeliveredTo, []string{"hook"}) {
			t.Errorf("%s reads %+v, want delivered to hook", n.ID, n)
		}
	}
}

func (h *harness) outboxPages(t *testing.T) {
	s, o := h.openOutbox(t)
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("n%d", i)
		appendNotices(t, s, id, 0, notice(id, store.NoticeRaised))
		want = append([]string{id}, want...)
	}
	var got []string
	var before int64
	for {
		page := listNotices(t, o, store.NoticeQuery{Before: before, Limit: 3})
		if len(page) == 0 {
			break
		}
		got = append(got, noticeIDs(page)...)
		before = page[len(page)-1].Seq
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged log = %v, want %v", got, want)
	}
}

func (h *harness) outboxDeleted(t *testing.T) {
	s, o := h.openOutbox(t)
	appendNotices(t, s, "t", 0, notice("n", store.NoticeRaised))
	if err := s.Delete(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	if ns := claim(t, o, "a", base.Add(time.Second), 0); len(ns) != 1 {
		t.Fatalf("the notice of a deleted thread was not claimed")
	}
}
