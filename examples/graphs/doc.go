// Package graphs holds the example graphs that the Interlude server hosts as
// built-ins (refund, two-step, parallel, gated, support-agent, nested, team-agent). Each is small and
// written to be read: together they show every way a run can pause. Their exact
// behaviour is part of the HTTP API's documentation.
package graphs
