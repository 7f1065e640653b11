package store

import "context"

// Header is implemented by stores that read a thread's indexed facts without
// its pending questions, the costly part to decode: a runtime opening a thread
// needs only its graph, version and creation time. The stores of this module
// implement it.
type Header interface {
	// Head returns what Meta does with Interrupts nil.
	Head(ctx context.Context, threadID string) (*Meta, error)
}
