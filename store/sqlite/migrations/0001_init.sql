-- Schema version 1 of the Interlude SQLite store.
-- Released migrations are never edited: add a new numbered file instead.

CREATE TABLE threads (
    id          TEXT    NOT NULL PRIMARY KEY,
    graph       TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    interrupts  BLOB,               -- JSON array of interlude.Question, NULL when none
    created_at  INTEGER NOT NULL,   -- unix nanoseconds
    updated_at  INTEGER NOT NULL    -- unix nanoseconds
);

-- Listings, newest first: the inbox (threads of one status, or one graph and
-- status), and every thread. Each serves its page by walking the index in order.
CREATE INDEX threads_inbox ON threads (status, updated_at DESC, id DESC);
CREATE INDEX threads_graph_inbox ON threads (graph, status, updated_at DESC, id DESC);
CREATE INDEX threads_recent ON threads (updated_at DESC, id DESC);

CREATE TABLE records (
    thread_id   TEXT    NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    format      INTEGER NOT NULL,
    kind        TEXT    NOT NULL,
    data        BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,   -- unix nanoseconds
    PRIMARY KEY (thread_id, version)
) WITHOUT ROWID;

CREATE TABLE snapshots (
    thread_id   TEXT    NOT NULL PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    format      INTEGER NOT NULL,
    data        BLOB    NOT NULL
);
