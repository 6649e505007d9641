//go:build linux

package pagecache

import "golang.org/x/sys/unix"

// Drop asks the kernel to drop the clean cached pages of bytes
// [off, off+n) of the open file fd (n 0: to the end). Dirty pages stay:
// sync first.
func Drop(fd uintptr, off, n int64) {
	_ = unix.Fadvise(int(fd), off, n, unix.FADV_DONTNEED)
}

// Sequential says the file fd will be read front to back, once: Linux
// doubles its readahead window.
func Sequential(fd uintptr) {
	_ = unix.Fadvise(int(fd), 0, 0, unix.FADV_SEQUENTIAL)
}
