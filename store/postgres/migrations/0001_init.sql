-- Schema version 1 of the Interlude Postgres store. It runs with search_path set
-- to the store's schema. Released migrations are never edited: add a new
-- numbered file instead.

CREATE TABLE threads (
    id          text COLLATE "C" NOT NULL PRIMARY KEY,
    graph       text COLLATE "C" NOT NULL,
    status      text COLLATE "C" NOT NULL,
    version     bigint NOT NULL,
    -- The pending interrupts (a JSON array of interlude.Question), NULL when none.
    -- json rather than jsonb: it keeps what was written byte for byte and accepts
    -- every string Go encodes, \u0000 included, which jsonb refuses.
    interrupts  json,
    created_at  bigint NOT NULL,  -- unix nanoseconds
    updated_at  bigint NOT NULL   -- unix nanoseconds
);

-- Listings, newest first: the inbox (threads of one status, or one graph and
-- status), and every thread. Each serves its page by walking the index in order.
CREATE INDEX threads_inbox ON threads (status, updated_at DESC, id DESC);
CREATE INDEX threads_graph_inbox ON threads (graph, status, updated_at DESC, id DESC);
CREATE INDEX threads_recent ON threads (updated_at DESC, id DESC);

CREATE TABLE records (
    thread_id   text COLLATE "C" NOT NULL,
    version     bigint NOT NULL,
    format      integer NOT NULL,
    kind        text NOT NULL,
    data        bytea NOT NULL,
    created_at  bigint NOT NULL,  -- unix nanoseconds
    PRIMARY KEY (thread_id, version)
);

CREATE TABLE snapshots (
    thread_id   text COLLATE "C" NOT NULL PRIMARY KEY,
    version     bigint NOT NULL,
    format      integer NOT NULL,
    data        bytea NOT NULL
);

-- The runtime compresses what is worth compressing; do not spend CPU on pglz
-- again. Large values still move out of line (TOAST).
ALTER TABLE records ALTER COLUMN data SET STORAGE EXTERNAL;
ALTER TABLE snapshots ALTER COLUMN data SET STORAGE EXTERNAL;
