// Package interlude is the vocabulary of human-in-the-loop pauses that the rest of
// Interlude speaks.
//
// Code running inside a graph node or a tool calls [Interrupt] (or the typed [Ask])
// when it needs a person's answer. The first time, the call records the question and
// returns an error that the code passes up; the runtime commits the pause durably and
// the run returns with status interrupted. When someone answers, the task runs again
// from its top and the same call returns the answer: [Answer] data, a cancellation,
// or a [*RejectedError]. Code before an interrupt therefore runs once per attempt and
// code after it runs once.
//
// Interrupt ids are deterministic: they derive from the thread, the checkpoint the
// step started from, the task's path and the call's position (or its Name), so a
// stale answer can never reach a later question.
//
// Errors carry a [Code] and match the Err values with errors.Is.
package interlude
