// Package hbasetest gives tests the real Apache HBase that scripts/test.sh
// starts (scripts/hbase/start.sh), through the SIMDEX_HBASE_ZK environment
// variable: the host:port of its ZooKeeper.
//
// Without SIMDEX_HBASE_ZK a test that needs HBase skips with a message that
// says how to run it, except under CI (CI=true), where it fails: CI must
// never pass by silently skipping the HBase tests.
package hbasetest

import (
	"fmt"
	"os"
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
