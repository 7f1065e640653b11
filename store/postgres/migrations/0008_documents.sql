-- Schema version 8: documents filed under a thread by the adapters that serve
-- threads (store.Documents), and nothing else changes. Released migrations are
-- never edited: add a new numbered file instead.

CREATE TABLE IF NOT EXISTS documents (
    thread_id   text COLLATE "C" NOT NULL,   -- no foreign key: a document may come before its thread
    kind        text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    data        bytea NOT NULL,
    created_at  bigint NOT NULL,   -- unix nanoseconds
    updated_at  bigint NOT NULL,   -- unix nanoseconds
    PRIMARY KEY (thread_id, kind, key)
);

-- Listings of one kind, newest first, across threads or for one thread.
CREATE INDEX IF NOT EXISTS documents_kind ON documents (kind, created_at DESC, thread_id DESC, key DESC);

-- Listings of one kind for one thread, newest first, without reading the
-- other threads' documents.
CREATE INDEX IF NOT EXISTS documents_thread ON documents (thread_id, kind, created_at DESC, key DESC);
