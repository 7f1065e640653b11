package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// TestClaimsAndSettlesOfNoticesCommitWithoutWaitingForTheLogsFlush records,
// by a trigger on the outbox, the synchronous_commit in force in each
// transaction that writes it: the append carrying notices waits for the log's
// flush, while a claim and a settle do not (one lost to a database crash only
// delivers its notices again, under the same ids).
func TestClaimsAndSettlesOfNoticesCommitWithoutWaitingForTheLogsFlush(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	q := pgx.Identifier{s.schema}.Sanitize()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE `+q+`.seen (op text, setting text);
		CREATE FUNCTION `+q+`.record_setting() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO `+q+`.seen VALUES (TG_OP, current_setting('synchronous_commit')); RETURN NULL; END $$;
		CREATE TRIGGER record_setting AFTER INSERT OR UPDATE ON `+q+`.outbox
			FOR EACH STATEMENT EXECUTE FUNCTION `+q+`.record_setting()`); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadInterrupted},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte(`{}`)}},
		Outbox:  []store.Notice{{ID: "n1", Graph: "g", Type: store.NoticeRaised, Data: []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Second)
	if ns, err := s.ClaimNotices(ctx, store.NoticeClaim{Owner: "d", Now: now, TTL: time.Minute}); err != nil || len(ns) != 1 {
		t.Fatalf("ClaimNotices = %v, %v; want the notice", ns, err)
	}
	if err := s.SettleNotices(ctx, []store.NoticeSettle{{ID: "n1", Owner: "d", State: store.NoticeDelivered, At: now}}); err != nil {
		t.Fatal(err)
	}
	rows, _ := s.pool.Query(ctx, `SELECT op || ' ' || setting FROM `+q+`.seen`)
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"INSERT on", "UPDATE off", "UPDATE off"}; !slices.Equal(seen, want) {
		t.Errorf("synchronous_commit of the outbox's writes (the append, the claim, the settle) = %q, want %q", seen, want)
	}
}
