-- Schema version 4: a lease that expired (its process died mid-run) is reported
-- once, by whichever replica looks first, so that the thread's listeners on
-- every replica hear that it failed. Taking or renewing the lease clears the mark.
ALTER TABLE leases ADD COLUMN announced boolean NOT NULL DEFAULT false;
