package fsync

// sysSyncfs is syncfs(2)'s number, which Go's frozen syscall package
// lacks on amd64.
const sysSyncfs = 306
