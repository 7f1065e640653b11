// Package vocab defines the words Interlude's packages share about questions and
// answers: Interruption, Resolution, Rejection, Exchange, and Error with its codes.
//
// Package interlude names each of them as its own (interlude.Interruption is
// vocab.Interruption), and that is where users meet them. They live here so that
// internal packages below interlude, such as the task bookkeeping, can hold the
// same values without copies or conversions.
package vocab
