//go:build linux && !amd64 && !arm64

package fsync

// sysSyncfs is unknown here: FileSystem falls back to sync(2).
const sysSyncfs = -1
