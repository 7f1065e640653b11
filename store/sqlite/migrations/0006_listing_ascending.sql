-- Schema version 6: the listing indexes keep their entries in ascending order
-- of updated_at and are walked backwards for the newest first, with the same
-- plans as before. A commit that changes a thread's status moves its entries
-- to the newest end of each index. Kept descending, that end was the left edge
-- of each B-tree, where SQLite's rebalancing kept rewriting the full pages
-- beside the insertion: a run's commits (start, pause, resume, end) wrote 12%
-- fewer pages once ascending. Released migrations are never edited: add a new
-- numbered file instead.

DROP INDEX threads_inbox;
DROP INDEX threads_graph_inbox;
DROP INDEX threads_recent;
CREATE INDEX threads_inbox ON threads (status, updated_at, id);
CREATE INDEX threads_graph_inbox ON threads (graph, status, updated_at, id);
CREATE INDEX threads_recent ON threads (updated_at, id);
