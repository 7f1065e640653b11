-- Schema version 4: the outbox. Each notice (store.Notice) is written in the
-- transaction of the change it reports, and delivered from here at least once.
-- Released migrations are never edited: add a new numbered file instead.

CREATE TABLE IF NOT EXISTS outbox (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT    NOT NULL UNIQUE,
    thread_id     TEXT    NOT NULL,   -- no foreign key: a deleted thread's notices are still told
    graph         TEXT    NOT NULL,
    type          TEXT    NOT NULL,
    interrupt_id  TEXT    NOT NULL,
    data          BLOB    NOT NULL,
    created_at    INTEGER NOT NULL,   -- unix nanoseconds
    state         TEXT    NOT NULL,   -- pending, delivered, failed
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_at       INTEGER NOT NULL,   -- unix nanoseconds, while pending
    owner         TEXT    NOT NULL DEFAULT '',
    claimed_until INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT    NOT NULL DEFAULT '',
    delivered_to  TEXT    NOT NULL DEFAULT '[]',
    settled_at    INTEGER             -- unix nanoseconds, once delivered or failed
);

-- The dispatcher's query: pending notices in the order they fall due.
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (next_at) WHERE state = 'pending';
-- The delivery log of one state, newest first.
CREATE INDEX IF NOT EXISTS outbox_state ON outbox (state, seq DESC);
