package interlude

import "context"

type actorKey struct{}

// WithActor returns ctx naming who acts through it. Answers given with this context
// record the name as their Resolution.By; the server sets it to the API token's name.
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

type answererKey struct{}

// WithAnswerer returns ctx naming who answers through it, with the groups and
// admin right that the check of a question's assignees (Request.Assignees)
// looks at; it sets the actor (WithActor) too. A context without it is a
// trusted caller in the program itself, which may answer every question; the
// server sets it from the API token.
func WithAnswerer(ctx context.Context, a Answerer) context.Context {
	return context.WithValue(WithActor(ctx, a.Name), answererKey{}, a)
}

// AnswererFrom returns what WithAnswerer set, and false if it was not.
func AnswererFrom(ctx context.Context) (Answerer, bool) {
	a, ok := ctx.Value(answererKey{}).(Answerer)
	return a, ok
}

// ActorFrom returns the name set by WithActor, or "".
func ActorFrom(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}
