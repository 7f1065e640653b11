package langgraph

import "sync"

// runners runs each streamed or background run (a waited one runs on its
// request's goroutine), and the housekeeping a run's end leaves, on a
// goroutine of its own, reusing the goroutines of runs that ended. A run's
// goroutine grows its stack to the depth of the graph and the store (deep
// with SQLite), and a new goroutine for every run grows a stack anew each
// time, copying it at every doubling: the copies cost more than a run's own
// work in the handler. The most recently idle goroutine
// runs the next run, its stack the likeliest to be still grown.
type runners struct {
	mu     sync.Mutex
	idle   []chan func() // the idle goroutines, most recently idle last
	closed bool
}

// maxIdleRunners bounds the idle goroutines kept; more end when their run does.
const maxIdleRunners = 256

// run runs f on an idle goroutine, or on a new one.
func (p *runners) run(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		c <- f
		return
	}
	p.mu.Unlock()
	go p.loop(f)
}

// loop runs f, then waits, idle, for the next function, until there are
// enough idle goroutines or close.
func (p *runners) loop(f func()) {
	c := make(chan func(), 1)
	for f != nil {
		f()
		p.mu.Lock()
		if p.closed || len(p.idle) >= maxIdleRunners {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		f = <-c
	}
}

// close ends the idle goroutines, and those that become idle later.
func (p *runners) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range p.idle {
		c <- nil
	}
	p.idle = nil
}
