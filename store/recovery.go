package store

import "context"

// RecoveryIndex is implemented by stores that list the threads whose answers
// were committed but whose step the answers start was not, so that a server can
// finish each one by itself. The runtime writes such a thread's status as
// running (StatusRunning) in the same append that records the answers, and the
// step's commit replaces it with what the step ended with: a thread whose
// stored status is still running, and that no live run holds, was left by a
// run that stopped between the two commits (its process died, say). The stores
// of this module implement it.
type RecoveryIndex interface {
	// Unfinished returns up to limit threads (0 meaning 100) whose stored
	// status is running and that no live run holds (in a store several
	// processes share, a thread whose lease is held is left out), the least
	// recently updated first; with graphs, only threads of those graphs.
	Unfinished(ctx context.Context, graphs []string, limit int) ([]Meta, error)
}

// UnfinishedLimit returns the number of threads Unfinished lists when asked for
// limit: 0 (or less) means 100.
func UnfinishedLimit(limit int) int { return ExpiredLimit(limit) }
