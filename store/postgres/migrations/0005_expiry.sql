-- Schema version 5: when each thread's first pending question expires, so that
-- a server finds the questions to close as expired without reading every
-- waiting thread (store.ExpiryIndex).

-- Unix nanoseconds of the earliest expires_at among the pending interrupts,
-- clamped to the range of bigint; NULL when none of them expires. Every append
-- writes it.
ALTER TABLE threads ADD COLUMN expires_at bigint;

-- Threads written before this version: their interrupts give the column.
-- timestamptz keeps microseconds, so an expiry indexed here may be up to half a
-- microsecond off the question's; the next append to the thread indexes its
-- exact nanosecond.
-- (least and greatest skip NULLs, hence the inner select: no row when no
-- question expires.)
UPDATE threads SET expires_at = (
    SELECT least(greatest(e * 1000000000, -9223372036854775808), 9223372036854775807)::bigint
    FROM (
        SELECT min(extract(epoch FROM (q ->> 'expires_at')::timestamptz)::numeric) AS e
        FROM json_array_elements(interrupts) AS q
    ) AS first
    WHERE e IS NOT NULL
)
WHERE json_typeof(interrupts) = 'array';

-- The questions due, earliest first; threads without an expiry take no room.
CREATE INDEX threads_expiry ON threads (expires_at) WHERE expires_at IS NOT NULL;
