//go:build !linux

package pagecache

// Drop does nothing here: only Linux is told which pages to drop.
func Drop(fd uintptr, off, n int64) {}

// Sequential does nothing here.
func Sequential(fd uintptr) {}
