package fsync

import (
	"fmt"
	"os"
	"syscall"
)

// Data makes a file's data durable, and its size: not its times.
func Data(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// syncfs is syncfs(2)'s number (-1: unknown), a variable so that the
// conversion to uintptr is checked when it runs, not when it compiles.
var syncfs = sysSyncfs

// FileSystem makes everything written to the file system holding dir
// durable with one call (syncfs(2)): files and folders, however many.
// (sync(2) where the syscall package does not number syncfs.)
func FileSystem(dir string) error {
	if syncfs < 0 {
		syscall.Sync()
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, _, errno := syscall.Syscall(uintptr(syncfs), d.Fd(), 0, 0); errno != 0 {
		return fmt.Errorf("syncfs %s: %w", dir, errno)
	}
	return nil
}
