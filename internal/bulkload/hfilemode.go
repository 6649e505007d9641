package bulkload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/simdex/simdex/hbase"
)

// DefaultHFileMode is ImportConfig.FileMode's default: the owner reads and
// writes, everyone else reads. It serves a cluster without Kerberos (the
// region server reads the files as itself) and one whose bulk-load caller
// owns the files (they are written as that user on HDFS).
const DefaultHFileMode os.FileMode = 0o644

// errHFileMode marks a permission the HFiles cannot have.
var errHFileMode = errors.New("bulkload: hfile mode")

// ParseHFileMode parses an octal permission, e.g. "0660" or "666" ("" is
// DefaultHFileMode).
func ParseHFileMode(s string) (os.FileMode, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultHFileMode, nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "0o"), 8, 32)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want octal permission bits, e.g. 0660", errHFileMode, s)
	}
	m := os.FileMode(n)
	return m, checkHFileMode(m)
}

// checkHFileMode refuses bits other than permissions, and a mode without
// the owner's read and write: the loader reads its files back (to cut them
// again after a split, or to put them) and removes them.
func checkHFileMode(m os.FileMode) error {
	if m&^os.ModePerm != 0 || m&0o600 != 0o600 {
		return fmt.Errorf("%w %#o: want permission bits (at most 0777) with the owner's read and write", errHFileMode, m)
	}
	return nil
}

// hfileDirMode is the permission of a directory of HFiles of mode m: m
// with the execute (search) bit wherever it has the read bit, so that
// whoever may read the files may reach them.
func hfileDirMode(m os.FileMode) os.FileMode { return m | (m&0o444)>>2 }

// createHFile creates the file path with the permission of its directory
// less the execute bits. The load gives each directory of HFiles
// hfileDirMode(ImportConfig.FileMode), and the files cut again after a
// split are written into the same directory: one setting covers both.
// The mode is set with chmod so that the umask does not narrow it.
func createHFile(path string) (*os.File, error) {
	st, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(st.Mode().Perm() &^ 0o111); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

// unreadableHint is what to add to err, a refused import of the file path:
// when the region server could not read it, the file's mode and the
// setting that changes it, as the refusal is most often a Kerberos
// caller who may not read and write a file it does not own.
func unreadableHint(err error, path string) string {
	if !errors.Is(err, hbase.ErrBulkLoadUnreadable) {
		return ""
	}
	mode := "?"
	if st, serr := os.Stat(path); serr == nil {
		mode = fmt.Sprintf("%#o", st.Mode().Perm())
	}
	return fmt.Sprintf(" (the file's mode is %s: see --hbase-hfile-mode; or the region servers do not see it at that path: see --hbase-hfile-remote-dir)", mode)
}
