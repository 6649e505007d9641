// Package diskuse measures what a store's files take on disk, for the
// benchmark tools that report bytes per document.
package diskuse

import (
	"io/fs"
	"path/filepath"
)

// Bytes is the sum of the sizes of the regular files below dir (what can
// be read of them; errors are skipped).
func Bytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
