// Package replicatest tests several `interlude serve` processes sharing one
// Postgres database, as users run them behind a load balancer: any replica takes
// any request for any thread, events reach the listeners of every replica, and a
// replica killed mid-run loses nothing and strands nothing.
//
// The tests build cmd/interlude once per test binary and run it as real
// processes, each test in a fresh Postgres schema. They need a database: set
// INTERLUDE_TEST_POSTGRES to a connection string (.ci/run does); without it they
// skip.
package replicatest
