// Package storekit is the toolkit for writing a store: the checks, errors,
// cursors, limits and encodings that make every implementation of
// [store.Store] behave alike. It is for store authors, in this module
// (store/memory, store/sqlite, store/postgres) or outside it; code that only
// uses a store needs package store alone.
//
// A store built with it validates each append with [CheckAppend] and each
// record it returns with [CheckFormat], fails a lost compare-and-set with
// [Conflict] and an unknown thread with [NotFound], pages its listing with
// [PageLimit], [DecodeCursor], [Before] and [NewPage], and indexes expiries
// with [EarliestExpiry] (or [ExpiryNanos] in SQL). A SQL store reads a
// thread's row with [ScanMeta]. The conformance suite,
// store/storetest, checks the result.
package storekit
