package interlude

import "context"

type actorKey struct{}

// WithActor returns ctx naming who acts through it. Answers given with this context
// record the name as their Resolution.By; the server sets it to the API token's name.
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// ActorFrom returns the name set by WithActor, or "".
func ActorFrom(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}
