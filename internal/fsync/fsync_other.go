//go:build !linux

package fsync

import (
	"os"
	"syscall"
)

// Data is fsync where there is no fdatasync.
func Data(f *os.File) error { return f.Sync() }

// FileSystem makes everything written durable: sync(2), as there is no
// syncfs(2) outside Linux.
func FileSystem(string) error {
	syscall.Sync()
	return nil
}
