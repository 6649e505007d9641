package hfile

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/hbasetest"
)

// TestHBaseReads is the real check of the format: HBase's own HFile tool
// (HFilePrettyPrinter, `hbase hfile -v -m -p -k -f`) opens the files this
// package writes, verifies their checksums, key order and index, and prints
// exactly the cells written, with the file info the writer declares.
func TestHBaseReads(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	multi := randCells(r, 2000)
	for i := range multi {
		// Printable values: the tool prints values with Bytes.toStringBinary.
		multi[i].Value = []byte(fmt.Sprintf("v%d-%s", i, strings.Repeat("z", r.IntN(200))))
	}
	dir := t.TempDir()
	files := map[string][]Cell{"tiny": tinyCells(), "multi": multi}
	cfgs := map[string]Config{"tiny": tinyCfg, "multi": {BlockSize: 4096}}
	for name, cells := range files {
		if err := os.WriteFile(filepath.Join(dir, name), write(t, cfgs[name], cells), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, cells := range files {
		path := filepath.Join(dir, name)
		out := hbasetest.HFileTool(t, "-v", "-m", "-p", "-k", "-f", path)
		var got []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "K: ") {
				got = append(got, line)
			}
		}
		if len(got) != len(cells) {
			t.Fatalf("%s: HBase printed %d cells, wrote %d:\n%s", name, len(got), len(cells), tail(out))
		}
		for i, c := range cells {
			want := fmt.Sprintf("K: %s/%s:%s/%d/Put/vlen=%d/seqid=0 V: %s", c.Row, c.Family, c.Qualifier, c.Timestamp, len(c.Value), c.Value)
			if got[i] != want {
				t.Fatalf("%s: cell %d: HBase printed\n%s\nwant\n%s", name, i, got[i], want)
			}
		}
		for _, want := range []string{
			fmt.Sprintf("entries=%d", len(cells)),
			"majorVersion=3", "minorVersion=3", "compressionCodec=NONE",
			"MAJOR_COMPACTION_KEY = true", "KEY_VALUE_VERSION = 1", "BULKLOAD_SOURCE_TASK = simdex-bulkload",
			fmt.Sprintf("Scanned kv count -> %d", len(cells)),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: HBase's output lacks %q:\n%s", name, want, tail(out))
			}
		}
		if strings.Contains(out, "ERROR") || strings.Contains(out, "Exception") {
			t.Errorf("%s: HBase reported a problem:\n%s", name, tail(out))
		}
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}
