-- Schema version 3: the event log is ordered per thread. Writers no longer
-- serialise on an advisory lock: a thread's events are written before or with
-- the release of its run's lease, so each thread's ids rise in the order its
-- events become visible, while different threads' ids may become visible out
-- of order. Each write's NOTIFY names its transaction and id range, and
-- listeners read exactly those rows. A build of schema version 2 follows one
-- global id cursor and would miss events written this way, so the version
-- changes and such a build refuses this schema.
COMMENT ON TABLE events IS
    'Events of graph runs for live listeners on every replica, ordered per thread: a thread''s ids rise in the order its events become visible.';
