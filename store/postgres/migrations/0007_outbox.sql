-- Schema version 7: the outbox. Each notice (store.Notice) is written in the
-- statement of the change it reports, and delivered from here at least once by
-- whichever replica claims it. Released migrations are never edited: add a new
-- numbered file instead.

CREATE TABLE IF NOT EXISTS outbox (
    seq           bigserial PRIMARY KEY,
    id            text COLLATE "C" NOT NULL UNIQUE,
    thread_id     text COLLATE "C" NOT NULL,  -- no foreign key: a deleted thread's notices are still told
    graph         text NOT NULL,
    type          text NOT NULL,
    interrupt_id  text NOT NULL,
    data          bytea NOT NULL,
    created_at    bigint NOT NULL,            -- unix nanoseconds
    state         text NOT NULL,              -- pending, delivered, failed
    attempts      integer NOT NULL DEFAULT 0,
    next_at       bigint NOT NULL,            -- unix nanoseconds, while pending
    owner         text NOT NULL DEFAULT '',
    claimed_until bigint NOT NULL DEFAULT 0,
    last_error    text NOT NULL DEFAULT '',
    delivered_to  text[] NOT NULL DEFAULT '{}',
    settled_at    bigint                      -- unix nanoseconds, once delivered or failed
);

-- The dispatchers' query: pending notices in the order they fall due.
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (next_at) WHERE state = 'pending';
-- The delivery log of one state, newest first.
CREATE INDEX IF NOT EXISTS outbox_state ON outbox (state, seq DESC);
