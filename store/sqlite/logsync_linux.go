package sqlite

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data, and of its metadata only what reading it back
// needs (its size), as SQLite's own sync does on Linux.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// unlinked reports whether f's file has no name left.
func unlinked(f *os.File) bool {
	var st syscall.Stat_t
	return syscall.Fstat(int(f.Fd()), &st) != nil || st.Nlink == 0
}
