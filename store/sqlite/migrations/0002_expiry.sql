-- Schema version 2: when each thread's first pending question expires, so that
-- a server finds the questions to close as expired without reading every
-- waiting thread (store.ExpiryIndex). Released migrations are never edited: add
-- a new numbered file instead.

-- Unix nanoseconds of the earliest expires_at among the pending interrupts,
-- clamped to the range of a 64-bit integer; NULL when none of them expires.
-- Every append writes it.
ALTER TABLE threads ADD COLUMN expires_at INTEGER;

-- Threads written before this version: their interrupts (a BLOB of JSON text,
-- hence the cast, as SQLite reads a BLOB as binary JSON) give the column.
-- SQLite's date functions read a time to the nearest millisecond, so an expiry
-- indexed here may be up to half a millisecond off the question's; the next
-- append to the thread indexes its exact nanosecond.
UPDATE threads SET expires_at = (
    SELECT CASE
        WHEN ms > 9223372036854 THEN 9223372036854775807
        WHEN ms < -9223372036854 THEN -9223372036854775807 - 1
        ELSE ms * 1000000
    END
    FROM (
        SELECT CAST(round(min(unixepoch(json_extract(q.value, '$.expires_at'), 'subsec')) * 1000) AS INTEGER) AS ms
        FROM json_each(CAST(threads.interrupts AS TEXT)) AS q
    )
)
WHERE interrupts IS NOT NULL AND json_valid(CAST(interrupts AS TEXT));

-- The questions due, earliest first; threads without an expiry take no room.
CREATE INDEX threads_expiry ON threads (expires_at) WHERE expires_at IS NOT NULL;
