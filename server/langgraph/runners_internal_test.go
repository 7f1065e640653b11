package langgraph

import (
	"sync"
	"testing"
)

// Every run gets a goroutine of its own, reused or new: runs that wait for
// each other all go on, however many idle goroutines there were, before and
// after the pool is closed.
func TestEveryRunRunsAtOnceOnAGoroutineOfItsOwn(t *testing.T) {
	var p runners
	wave := func(n int) {
		var started, done sync.WaitGroup
		started.Add(n)
		done.Add(n)
		for range n {
			p.run(func() {
				defer done.Done()
				started.Done()
				started.Wait() // returns once all n run at once
			})
		}
		done.Wait()
	}
	wave(maxIdleRunners + 10)
	wave(maxIdleRunners + 10) // on the idle goroutines of the first, and new ones
	p.close()
	wave(3)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) != 0 {
		t.Fatalf("%d goroutines stayed idle after close", len(p.idle))
	}
}
