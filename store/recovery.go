package store

import "context"

// RecoveryIndex is implemented by stores that list the threads whose run
// stopped before its end after committing work that left more to do, so that a
// server can finish each one by itself. The runtime writes a thread's status as
// running (interlude.ThreadRunning) in the append of such work (answers that leave no
// question pending, a step after which nodes are due), and the run's last
// commit replaces it with how the run ended: a thread whose stored status is
// still running, and that no live run holds, was left by a run that stopped in
// between (its process died, or it was cancelled). The stores of this module
// implement it.
type RecoveryIndex interface {
	// Unfinished returns up to limit threads (0 meaning 100) whose stored
	// status is running and that no live run holds (in a store several
	// processes share, a thread whose lease is held is left out), the least
	// recently updated first; with graphs, only threads of those graphs.
	Unfinished(ctx context.Context, graphs []string, limit int) ([]Meta, error)
}
