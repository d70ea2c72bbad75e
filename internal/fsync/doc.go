// Package fsync makes writes durable in the ways a group commit needs:
// Data syncs one file's data (fdatasync), FileSystem every file written
// to a file system at once (syncfs), so that a writer of many small
// files (an execution's, an event stream's) syncs them with one call
// instead of one fsync each.
package fsync
