-- Schema version 3: a thread keeps every snapshot written, not only the newest,
-- so that the state as of an old checkpoint is rebuilt from the snapshot before
-- it instead of from the thread's first record (store.Store.History). Released
-- migrations are never edited: add a new numbered file instead.

-- SQLite cannot change a table's primary key: the table is copied into one
-- keyed by thread and version.
CREATE TABLE snapshots_v3 (
    thread_id   TEXT    NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    format      INTEGER NOT NULL,
    data        BLOB    NOT NULL,
    PRIMARY KEY (thread_id, version)
);
INSERT INTO snapshots_v3 (thread_id, version, format, data)
    SELECT thread_id, version, format, data FROM snapshots;
DROP TABLE snapshots;
ALTER TABLE snapshots_v3 RENAME TO snapshots;
