package keylock

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
)

// TestOneHolderPerKey checks that holders of one key never overlap, while
// other keys stay free.
func TestOneHolderPerKey(t *testing.T) {
	k := New()
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		holding = map[string]int{}
	)
	for i := range 200 {
		key := []string{"a", "b", "c"}[i%3]
		wg.Go(func() {
			held, err := k.Hold(ctx, key)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			holding[key]++
			if holding[key] > 1 {
				t.Errorf("two holders of %q at once", key)
			}
			mu.Unlock()
			runtime.Gosched() // let another holder in, if the lock would
			mu.Lock()
			holding[key]--
			mu.Unlock()
			held.Unlock()
		})
	}
	wg.Wait()
	noneLeft(t, k)
}

// TestWaitEndsWithTheContext checks that a waiter gives up when its context
// ends, and that the key is still usable afterwards.
func TestWaitEndsWithTheContext(t *testing.T) {
	k := New()
	held, err := k.Hold(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := k.Hold(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait with a cancelled context: %v", err)
	}
	held.Unlock()
	again, err := k.Hold(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	again.Unlock()
}

// TestTryHoldNeverWaits checks that TryHold takes a free key, refuses a held one
// at once, and leaves nothing behind either way.
func TestTryHoldNeverWaits(t *testing.T) {
	k := New()
	held, ok := k.TryHold("a")
	if !ok {
		t.Fatal("TryHold refused a free key")
	}
	if _, ok := k.TryHold("a"); ok {
		t.Fatal("TryHold took a held key")
	}
	if other, ok := k.TryHold("b"); !ok {
		t.Fatal("TryHold refused another key")
	} else {
		other.Unlock()
	}
	held.Unlock()
	again, ok := k.TryHold("a")
	if !ok {
		t.Fatal("TryHold refused a key its holder let go")
	}
	again.Unlock()
	noneLeft(t, k)
}

// TestHeldKeyIsRefusedUntilUnlocked checks Hold and TryHold: a held key is
// refused to others until its holder unlocks it, keys are reused across many
// holders without being left behind, and the zero Held unlocks nothing.
func TestHeldKeyIsRefusedUntilUnlocked(t *testing.T) {
	k := New()
	ctx := context.Background()
	for i := range 100 {
		key := []string{"a", "b"}[i%2]
		h, err := k.Hold(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := k.TryHold(key); ok {
			t.Fatalf("TryHold took %q while it was held", key)
		}
		waitCtx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := k.Hold(waitCtx, key); !errors.Is(err, context.Canceled) {
			t.Fatalf("Hold with a cancelled context on a held key: %v", err)
		}
		h.Unlock()
		again, ok := k.TryHold(key)
		if !ok {
			t.Fatalf("TryHold refused %q after its holder let go", key)
		}
		again.Unlock()
	}
	Held{}.Unlock()
	noneLeft(t, k)
}

// noneLeft fails the test if k still keeps a lock nobody holds or waits for.
func noneLeft(t *testing.T, k *Locks) {
	t.Helper()
	for i := range k.shards {
		if n := len(k.shards[i].m); n != 0 {
			t.Fatalf("%d locks left behind with nobody holding them", n)
		}
	}
}
