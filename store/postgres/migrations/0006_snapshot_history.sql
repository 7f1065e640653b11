-- Schema version 6: a thread keeps every snapshot written, not only the newest,
-- so that the state as of an old checkpoint is rebuilt from the snapshot before
-- it instead of from the thread's first record (store.Store.History). Released
-- migrations are never edited: add a new numbered file instead.

-- The key becomes the thread and the snapshot's version; its index serves both
-- the newest snapshot (Load) and the newest before a version (History).
ALTER TABLE snapshots DROP CONSTRAINT snapshots_pkey;
ALTER TABLE snapshots ADD PRIMARY KEY (thread_id, version);
