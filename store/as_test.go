package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/store/sqlite"
)

// wrapper is a store that wraps another the way instrumentation does: it has
// the Store methods only, and Unwrap.
type wrapper struct{ store.Store }

func (w wrapper) Unwrap() store.Store { return w.Store }

// opaque wraps a store without saying so.
type opaque struct{ store.Store }

// leasingWrapper is a wrapper that has a capability of its own.
type leasingWrapper struct{ wrapper }

func (leasingWrapper) Lease(context.Context, store.LeaseRequest) (store.Lease, error) {
	return nil, nil
}

// found reports whether As finds capability T in s, and fails t unless what it
// finds is want itself.
func found[T any](t *testing.T, s store.Store, want any) bool {
	t.Helper()
	got, ok := store.As[T](s)
	if ok && any(got) != want {
		t.Errorf("As found a %T other than the store that has the capability (a %T)", got, want)
	}
	return ok
}

func TestAWrappedStoreKeepsItsCapabilities(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memory", func(t *testing.T) store.Store { return memory.New() }},
		{"sqlite", func(t *testing.T) store.Store {
			s, err := sqlite.Open(filepath.Join(t.TempDir(), "threads.db"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	}
	wrappings := []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"bare", func(s store.Store) store.Store { return s }},
		{"wrapped", func(s store.Store) store.Store { return wrapper{s} }},
		{"wrapped twice", func(s store.Store) store.Store { return wrapper{wrapper{s}} }},
	}
	for _, b := range backends {
		for _, w := range wrappings {
			t.Run(b.name+"/"+w.name, func(t *testing.T) {
				inner := b.open(t)
				t.Cleanup(func() { inner.Close() })
				s := w.wrap(inner)
				if !found[store.ExpiryIndex](t, s, inner) {
					t.Error("the store lists expired questions, but As finds no ExpiryIndex")
				}
				if !found[store.RecoveryIndex](t, s, inner) {
					t.Error("the store lists unfinished runs, but As finds no RecoveryIndex")
				}
				if found[store.Leaser](t, s, inner) || found[store.LeaseWatcher](t, s, inner) {
					t.Error("a store of one process has no leases, but As finds a Leaser or LeaseWatcher")
				}
			})
		}
	}
}

func TestAWrapperThatDoesNotUnwrapHidesCapabilities(t *testing.T) {
	s := wrapper{opaque{memory.New()}}
	if _, ok := store.As[store.ExpiryIndex](s); ok {
		t.Error("As looked through a wrapper without Unwrap")
	}
}

func TestAWrappersOwnCapabilityComesFirst(t *testing.T) {
	inner := memory.New()
	outer := leasingWrapper{wrapper{inner}}
	s := wrapper{outer}
	if !found[store.Leaser](t, s, outer) {
		t.Error("As finds no Leaser, though a wrapper in the chain is one")
	}
	if !found[store.ExpiryIndex](t, s, inner) {
		t.Error("As stopped at the leasing wrapper instead of looking through it")
	}
}

func TestAsOnNoStoreFindsNothing(t *testing.T) {
	if _, ok := store.As[store.ExpiryIndex](nil); ok {
		t.Error("As found a capability in a nil store")
	}
}
