package queue

import (
	"os"
	"syscall"
	"time"
)

// changeTime is when the file's inode last changed (written, renamed into
// place, or copied with its old modification time kept).
func changeTime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
	}
	return time.Time{}
}
