-- Schema version 2: thread leases and the shared event log, for many server
-- replicas on one database. It runs with search_path set to the store's schema.

-- A run holds its thread's lease; the row is deleted when the run ends. A row
-- whose expires_at has passed belongs to a run whose process died: the thread
-- reads as failed until a run takes the lease over. Times are the database's
-- clock, so the replicas' clocks do not matter.
CREATE TABLE leases (
    thread_id   text COLLATE "C" NOT NULL PRIMARY KEY,
    owner       text NOT NULL,
    token       bigint NOT NULL,  -- names one taking of the lease: Renew and Release match it
    expires_at  timestamptz NOT NULL
);

-- The events of graph runs, for live listeners on every replica. Writers insert
-- under an advisory lock, so ids become visible in increasing order and a reader
-- that has seen id n has seen every id below it. Old events are trimmed.
CREATE TABLE events (
    id          bigserial PRIMARY KEY,
    thread_id   text COLLATE "C" NOT NULL,
    name        text NOT NULL,
    data        bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_thread ON events (thread_id, id);
