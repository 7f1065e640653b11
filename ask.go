package interlude

import (
	"context"
	"reflect"

	"github.com/interludehq/interlude/internal/schema"
)

// Ask is Interrupt with a typed answer: it pauses like Interrupt and, once answered,
// decodes the answer into T. When req.Schema is nil the response schema is derived
// from T (its fields, json tags and jsonschema tags), so the answer is validated
// before the task runs again. A cancelled question returns ErrCancelled; a rejected
// one returns the *RejectedError.
func Ask[T any](ctx context.Context, req Request) (T, error) {
	var zero T
	if req.Schema == nil {
		s, err := schema.For(reflect.TypeFor[T]())
		if err != nil {
			return zero, invalidRequest("the answer type", err)
		}
		req.Schema = s
	}
	ans, err := Interrupt(ctx, req)
	if err != nil {
		return zero, err
	}
	var v T
	if err := ans.Decode(&v); err != nil {
		return zero, err
	}
	return v, nil
}
