//go:build linux

package pagecache

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of f's first n bytes that are in the page cache.
func resident(t *testing.T, f *os.File, n int) int {
	t.Helper()
	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (n+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys/unix has no Mincore wrapper.
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(n), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	c := 0
	for _, v := range vec {
		c += int(v & 1)
	}
	return c
}

func TestDrop(t *testing.T) {
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("the temporary directory is on tmpfs, whose pages are the file itself")
	}
	const n = 8 << 20
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i)
	}
	if _, err := f.Write(buf); err != nil {
		t.Fatal(err)
	}
	Drop(f.Fd(), 0, 0) // dirty pages stay
	if got := resident(t, f, n); got == 0 {
		t.Fatalf("unsynced pages were dropped (%d resident)", got)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	Sequential(f.Fd())
	Drop(f.Fd(), 0, n/2)
	pages := n / os.Getpagesize()
	if got := resident(t, f, n); got > pages/2 {
		t.Fatalf("%d of %d pages resident after dropping the first half", got, pages)
	}
	Drop(f.Fd(), 0, 0)
	if got := resident(t, f, n); got != 0 {
		t.Fatalf("%d of %d pages resident after dropping them all", got, pages)
	}
}
