package store

// As finds in s the capability T, usually one of this package's optional
// interfaces (Leaser, LeaseWatcher, ExpiryIndex, RecoveryIndex): it returns s as
// a T if s is one, and otherwise looks in the store s wraps (its Unwrap method),
// and so on down the chain, the way errors.As looks through wrapped errors. It
// reports false if no store of the chain is a T.
//
// Callers ask for capabilities with As rather than a type assertion, so that a
// wrapper (instrumentation, caching, access control) need not copy every
// capability of the store it wraps.
func As[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		w, ok := s.(interface{ Unwrap() Store })
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	var zero T
	return zero, false
}
