package fsync

import "syscall"

const sysSyncfs = syscall.SYS_SYNCFS
