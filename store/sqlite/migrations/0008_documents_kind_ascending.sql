-- Schema version 8: the listing of documents across threads keeps its index in
-- ascending order of created_at and walks it backwards for the newest first,
-- with the same plan as before, as schema version 6 did for the thread
-- listings. Kept descending, every new document of a kind went to the left
-- edge of its kind's range, where SQLite's rebalancing kept rewriting the full
-- pages beside the insertion: the LangGraph routes' create, pause and resume
-- cycle (two run records and a thread record) wrote 4.5% fewer log pages once
-- ascending. Released migrations are never edited: add a new numbered file
-- instead.

DROP INDEX documents_kind;
CREATE INDEX documents_kind ON documents (kind, created_at, thread_id, key);
