package bulkload

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestParseHFileMode(t *testing.T) {
	for in, want := range map[string]os.FileMode{"": 0o644, "0666": 0o666, "660": 0o660, "0o600": 0o600, " 0644 ": 0o644} {
		if got, err := ParseHFileMode(in); err != nil || got != want {
			t.Errorf("ParseHFileMode(%q) = %#o, %v; want %#o", in, got, err, want)
		}
	}
	for _, in := range []string{"rw-rw-rw-", "0999", "01666", "0444", "0200", "-1", "0x1b6"} {
		if m, err := ParseHFileMode(in); !errors.Is(err, errHFileMode) {
			t.Errorf("ParseHFileMode(%q) = %#o, %v; want errHFileMode", in, m, err)
		}
	}
	for m, want := range map[os.FileMode]os.FileMode{0o644: 0o755, 0o666: 0o777, 0o660: 0o770, 0o600: 0o700, 0o640: 0o750} {
		if got := hfileDirMode(m); got != want {
			t.Errorf("hfileDirMode(%#o) = %#o, want %#o", m, got, want)
		}
	}
	if err := (ImportConfig{Mode: ImportHFile, FileMode: 0o444}).validate(); !errors.Is(err, errHFileMode) {
		t.Errorf("validate with mode 0444: %v", err)
	}
	if c := (ImportConfig{}).withDefaults(""); c.FileMode != DefaultHFileMode {
		t.Errorf("default mode %#o", c.FileMode)
	}
}

// TestCreateHFileMode: a file takes its directory's mode less the execute
// bits, whatever the umask.
func TestCreateHFileMode(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, m := range []os.FileMode{0o666, 0o660, 0o644, 0o600} {
		dir := filepath.Join(t.TempDir(), "d")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, hfileDirMode(m)); err != nil {
			t.Fatal(err)
		}
		f, err := createHFile(filepath.Join(dir, "000001.hfile"))
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != m {
			t.Errorf("file in a directory of mode %#o: %#o, want %#o", hfileDirMode(m), st.Mode().Perm(), m)
		}
	}
}
