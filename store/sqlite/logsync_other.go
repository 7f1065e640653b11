//go:build !linux

package sqlite

import "os"

// fdatasync flushes f to the disk.
func fdatasync(f *os.File) error { return f.Sync() }

// unlinked reports whether f's file has no name left; outside Linux the log's
// descriptor is kept without the check.
func unlinked(*os.File) bool { return false }
