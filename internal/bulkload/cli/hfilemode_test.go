package cli

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/bulkload"
)

// TestHFileMode: --hbase-hfile-mode (flag, SIMDEX_HBASE_HFILE_MODE or the
// file key) reaches the load's ImportConfig.FileMode; a mode the loader
// cannot use is a configuration error naming the flag.
func TestHFileMode(t *testing.T) {
	base := []string{"--store", "hbase", "--hbase-zk", "h:1", "--checkpoint-dir", t.TempDir(), "--hbase-import", "hfile", "in.csv"}
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want os.FileMode
	}{
		{nil, nil, bulkload.DefaultHFileMode},
		{[]string{"--hbase-hfile-mode", "0666"}, nil, 0o666},
		{nil, map[string]string{"SIMDEX_HBASE_HFILE_MODE": "660"}, 0o660},
	} {
		c, err := ParseArgs(append(append([]string{}, tc.args...), base...), env(tc.env), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		lc, err := c.loadConfig(nil, io.Discard, log)
		if err != nil {
			t.Fatal(err)
		}
		if lc.Import.FileMode != tc.want || lc.Import.Mode != bulkload.ImportHFile {
			t.Errorf("%v %v: import %+v, want mode %#o", tc.args, tc.env, lc.Import, tc.want)
		}
	}
	_, err := ParseArgs(append([]string{"--hbase-hfile-mode", "0444"}, base...), env(nil), io.Discard)
	if !errors.Is(err, bulkload.ErrConfig) || !strings.Contains(err.Error(), "--hbase-hfile-mode") {
		t.Errorf("mode 0444: %v, want ErrConfig naming --hbase-hfile-mode", err)
	}
}
