package hbasetest

import (
	"bytes"
	"testing"
)

// HFileTool runs HBase's own HFile tool (HFilePrettyPrinter, what `hbase
// hfile` runs; scripts/hbase/hfile.sh) with args and returns its stdout and
// stderr together. It needs HBase installed (scripts/hbase/install.sh), not
// running; without it the test skips (fails under CI).
func HFileTool(t testing.TB, args ...string) string {
	t.Helper()
	cmd := installedTool(t, "HBase's HFile tool", "hfile.sh", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("hbasetest: hfile.sh %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}
