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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// EnvZK names the environment variable holding the ZooKeeper address
// (host:port) of the HBase the tests use.
const EnvZK = "SIMDEX_HBASE_ZK"

// EnvVersion names the environment variable choosing the installed HBase
// version the scripts run (scripts/hbase/version.sh); unset is the default.
const EnvVersion = "SIMDEX_HBASE_VERSION"

// DefaultVersion is the HBase version scripts/hbase installs when
// EnvVersion is unset.
const DefaultVersion = "2.6.4"

// EnvPrivatePorts names the environment variable that moves every private
// HBase (StartPrivate) onto other ports: "ZK,MASTER,RS". The version
// matrix (scripts/hbase/matrix.sh) runs the tests that start one on its own
// ports, one package at a time, so they collide neither with each other
// nor with scripts/test.sh running beside it.
const EnvPrivatePorts = "SIMDEX_HBASE_PRIVATE_PORTS"

// ClasspathFile returns the classpath file install.sh writes for version in
// the install dir home: cp.txt for the default, cp-<version>.txt otherwise
// (the naming of scripts/hbase/version.sh).
func ClasspathFile(home, version string) string {
	if version == "" || version == DefaultVersion {
		return filepath.Join(home, "cp.txt")
	}
	return filepath.Join(home, "cp-"+version+".txt")
}

// privatePorts returns the ports a private HBase uses: the test's own, or
// those of EnvPrivatePorts (value env) with a name telling them apart.
func privatePorts(env string, zk, master, rs int) (ports [3]int, suffix string, err error) {
	if env == "" {
		return [3]int{zk, master, rs}, "", nil
	}
	parts := strings.Split(env, ",")
	if len(parts) != 3 {
		return ports, "", fmt.Errorf("hbasetest: %s=%q: want ZK,MASTER,RS", EnvPrivatePorts, env)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 || n > 65535 {
			return ports, "", fmt.Errorf("hbasetest: %s=%q: %q is not a port", EnvPrivatePorts, env, p)
		}
		ports[i] = n
	}
	return ports, fmt.Sprintf("-%d", ports[0]), nil
}

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

// Namespace is a fresh namespace name for a test: prefix, the process id
// and the clock, so that parallel and repeated runs never share one.
func Namespace(prefix string) string {
	return fmt.Sprintf("%s%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9)
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
	cmd := installedTool(t, "the Java reference peer", "peer.sh", args...)
	return runPeer(t, cmd, stdin, "peer", args)
}

// runPeer runs the peer's command cmd with stdin and returns its stdout;
// a failure fails the test with its stderr (what and args name the run).
func runPeer(t testing.TB, cmd *exec.Cmd, stdin, what string, args []string) string {
	t.Helper()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hbasetest: %s %v: %v\n%s", what, args, err, stderr.String())
	}
	return stdout.String()
}

// installedTool returns the command that runs scripts/hbase/<script> with
// args against the locally installed HBase (SIMDEX_HBASE_HOME, default
// <repo>/.hbase). Without an installation the test skips, or fails under CI,
// naming what needed it.
func installedTool(t testing.TB, what, script string, args ...string) *exec.Cmd {
	t.Helper()
	root := RepoRoot(t)
	home := os.Getenv("SIMDEX_HBASE_HOME")
	if home == "" {
		home = filepath.Join(root, ".hbase")
	}
	if _, err := os.Stat(ClasspathFile(home, os.Getenv(EnvVersion))); err != nil {
		msg := "hbasetest: " + what + " needs HBase installed (scripts/hbase/install.sh): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "hbase", script), args...)
	cmd.Env = append(os.Environ(), "SIMDEX_HBASE_HOME="+home)
	return cmd
}

// Instance is a private HBase that one test starts for itself (to restart
// or kill it without disturbing tests in other packages that share the
// suite's HBase).
type Instance struct {
	// ZK is its ZooKeeper address.
	ZK  string
	env []string
	dir string
}

// StartPrivate starts a throwaway HBase with its own data directory (under
// SIMDEX_HBASE_HOME, wiped first) and the given ZooKeeper, master and
// region server ports (or those of SIMDEX_HBASE_PRIVATE_PORTS), and kills
// it when the test ends. It runs the installed SIMDEX_HBASE_VERSION. Skips
// (fails under CI) when HBase is not installed or SIMDEX_HBASE_ZK is unset
// (the suite's signal that HBase tests should run).
func StartPrivate(t testing.TB, name string, zkPort, masterPort, rsPort int) *Instance {
	t.Helper()
	ZK(t)
	root := RepoRoot(t)
	home := os.Getenv("SIMDEX_HBASE_HOME")
	if home == "" {
		home = filepath.Join(root, ".hbase")
	}
	if _, err := os.Stat(ClasspathFile(home, os.Getenv(EnvVersion))); err != nil {
		msg := "hbasetest: a private HBase needs HBase installed (scripts/hbase/install.sh): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ports, suffix, err := privatePorts(os.Getenv(EnvPrivatePorts), zkPort, masterPort, rsPort)
	if err != nil {
		t.Fatal(err)
	}
	zkPort, masterPort, rsPort = ports[0], ports[1], ports[2]
	dir := filepath.Join(home, "private-"+name+suffix)
	in := &Instance{ZK: fmt.Sprintf("127.0.0.1:%d", zkPort), dir: dir, env: append(os.Environ(),
		"SIMDEX_HBASE_HOME="+home,
		"SIMDEX_HBASE_DATA="+dir,
		fmt.Sprintf("SIMDEX_HBASE_ZK_PORT=%d", zkPort),
		fmt.Sprintf("SIMDEX_HBASE_MASTER_PORT=%d", masterPort),
		fmt.Sprintf("SIMDEX_HBASE_RS_PORT=%d", rsPort),
		"SIMDEX_HBASE_HEAP=768m",
		"SIMDEX_HBASE_STOP_KILL=1",
	)}
	in.script(t, "stop.sh") // a leftover from an aborted run
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	// A port in use would not fail the start: HBase's ZooKeeper quietly
	// takes the next port, and start.sh's readiness check would then find
	// whatever HBase owns the requested one, so the test would stop its own
	// instance while talking to somebody else's.
	for _, port := range []int{zkPort, masterPort, rsPort} {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatalf("hbasetest: port %d for the private HBase %q is in use (another HBase?): %v", port, name, err)
		}
		ln.Close()
	}
	t.Cleanup(func() { in.script(t, "stop.sh") })
	in.script(t, "start.sh")
	return in
}

// Kill stops the instance with SIGKILL (no clean shutdown).
func (in *Instance) Kill(t testing.TB) { t.Helper(); in.script(t, "stop.sh") }

// Start starts the instance again on the same data and waits until it
// serves.
func (in *Instance) Start(t testing.TB) { t.Helper(); in.script(t, "start.sh") }

// Signal sends sig to the instance's JVM (standalone HBase is one process:
// master, region server and ZooKeeper). SIGSTOP and SIGCONT make a hung,
// then recovered, region server. A test that stops the JVM must continue
// it before it ends: the cleanup's SIGKILL works either way.
func (in *Instance) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(in.dir, "hbase.pid"))
	if err != nil {
		t.Fatalf("hbasetest: pid of the private HBase: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("hbasetest: bad pid file %q", b)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("hbasetest: signal %v to HBase pid %d: %v", sig, pid, err)
	}
}

func (in *Instance) script(t testing.TB, name string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(RepoRoot(t), "scripts", "hbase", name))
	cmd.Env = in.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hbasetest: %s: %v\n%s", name, err, out)
	}
}
