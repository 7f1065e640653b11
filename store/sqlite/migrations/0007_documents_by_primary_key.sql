-- Schema version 7: one thread's documents of a kind are listed through the
-- primary key (thread_id, kind, key), which finds them as well as the
-- documents_thread index did, and sorted newest first after: the adapters keep
-- a thread's documents of a kind few (the LangGraph routes prune a thread's
-- runs to about a hundred), so the sort is small. Each document written then
-- changes two B-trees instead of three. Released migrations are never edited:
-- add a new numbered file instead. Files created by the first release of
-- version 5 have no documents_thread index.

DROP INDEX IF EXISTS documents_thread;
