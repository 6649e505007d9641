package hbasetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// HFileTool runs HBase's own HFile tool (HFilePrettyPrinter, what `hbase
// hfile` runs; scripts/hbase/hfile.sh) with args and returns its stdout and
// stderr together. It needs HBase installed (scripts/hbase/install.sh), not
// running; without it the test skips (fails under CI).
func HFileTool(t testing.TB, args ...string) string {
	t.Helper()
	root := RepoRoot(t)
	home := os.Getenv("SIMDEX_HBASE_HOME")
	if home == "" {
		home = filepath.Join(root, ".hbase")
	}
	if _, err := os.Stat(filepath.Join(home, "cp.txt")); err != nil {
		msg := "hbasetest: HBase's HFile tool needs HBase installed (scripts/hbase/install.sh): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "hbase", "hfile.sh"), args...)
	cmd.Env = append(os.Environ(), "SIMDEX_HBASE_HOME="+home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("hbasetest: hfile.sh %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}
