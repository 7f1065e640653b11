-- Schema version 5: documents filed under a thread by the adapters that serve
-- threads (store.Documents), and nothing else changes. Released migrations are
-- never edited: add a new numbered file instead.

CREATE TABLE IF NOT EXISTS documents (
    thread_id   TEXT    NOT NULL,   -- no foreign key: a document may come before its thread
    kind        TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    data        BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,   -- unix nanoseconds
    updated_at  INTEGER NOT NULL,   -- unix nanoseconds
    PRIMARY KEY (thread_id, kind, key)
) WITHOUT ROWID;

-- Listings of one kind, newest first, across threads or for one thread.
CREATE INDEX IF NOT EXISTS documents_kind ON documents (kind, created_at DESC, thread_id DESC, key DESC);

-- Listings of one kind for one thread, newest first, without reading the
-- other threads' documents.
CREATE INDEX IF NOT EXISTS documents_thread ON documents (thread_id, kind, created_at DESC, key DESC);
