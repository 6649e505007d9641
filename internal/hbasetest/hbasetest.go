// Package hbasetest gives tests the real Apache HBase that scripts/test.sh
// starts (scripts/hbase/start.sh), through the SIMDEX_HBASE_ZK environment
// variable: the host:port of its ZooKeeper.
//
// Without SIMDEX_HBASE_ZK a test that needs HBase skips with a message that
// says how to run it, except under CI (CI=true), where it fails: CI must
// never pass by silently skipping the HBase tests.
package hbasetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvZK names the environment variable holding the ZooKeeper address
// (host:port) of the HBase the tests use.
const EnvZK = "SIMDEX_HBASE_ZK"

// decide is ZK's logic without the testing.TB: it returns the address, or a
// reason and whether that reason is a failure (CI) rather than a skip.
func decide(zk, ci string) (addr, reason string, fail bool) {
	if zk != "" {
		return zk, "", false
	}
	if ci == "true" {
		return "", EnvZK + " is unset under CI=true: scripts/test.sh must install and start HBase (needs java and mvn)", true
	}
	return "", EnvZK + " is unset: run scripts/test.sh (starts HBase when java and mvn exist), or start one with scripts/hbase/start.sh and export " + EnvZK + "=<its output>", false
}

// ZK returns the ZooKeeper address of the test HBase, or ends the test:
// skipped normally, failed under CI=true.
func ZK(t testing.TB) string {
	t.Helper()
	addr, reason, fail := decide(os.Getenv(EnvZK), os.Getenv("CI"))
	switch {
	case fail:
		t.Fatal(fmt.Sprintf("hbasetest: %s", reason))
	case addr == "":
		t.Skip(fmt.Sprintf("hbasetest: %s", reason))
	}
	return addr
}

// RepoRoot returns the repository root (the directory holding go.mod),
// found upwards from the working directory of the test.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("hbasetest: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Peer runs the reference peer (HBase's own Java client, scripts/hbase/
// peer.sh) with stdin and returns its stdout. It skips (fails under CI)
// when HBase is not installed locally (scripts/hbase/install.sh).
func Peer(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	root := RepoRoot(t)
	home := os.Getenv("SIMDEX_HBASE_HOME")
	if home == "" {
		home = filepath.Join(root, ".hbase")
	}
	if _, err := os.Stat(filepath.Join(home, "cp.txt")); err != nil {
		msg := "hbasetest: the Java reference peer needs HBase installed (scripts/hbase/install.sh): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "hbase", "peer.sh"), args...)
	cmd.Env = append(os.Environ(), "SIMDEX_HBASE_HOME="+home)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hbasetest: peer %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}
