package chaos

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// EnvCluster names the variable holding the ZooKeeper address of the
// cluster the chaos tests run on (cluster.sh start prints it).
const EnvCluster = "SIMDEX_HBASE_CLUSTER"

// EnvRequire, when "1", makes a missing cluster a failure instead of a skip
// (scripts/test.sh's cluster step sets it: that step must not pass by
// skipping).
const EnvRequire = "SIMDEX_CHAOS_REQUIRE"

// cluster controls the processes of a cluster.sh cluster and drives its
// region operations through one long-lived ClusterAdmin (`cluster.sh admin
// -`): a JVM per operation would cost seconds of CPU each on a 2-core host.
type cluster struct {
	zk     string
	script string
	base   int // SIMDEX_CLUSTER_PORT_BASE

	mu    sync.Mutex // serializes admin commands
	admin *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	errb  bytes.Buffer
}

func openCluster(t *testing.T) *cluster {
	t.Helper()
	zk := os.Getenv(EnvCluster)
	if zk == "" {
		msg := EnvCluster + " is unset: start a cluster with scripts/hbase/cluster.sh start (or run scripts/hbase/chaos.sh) and export " + EnvCluster + "=<its output>"
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	c := &cluster{zk: zk, script: filepath.Join(hbasetest.RepoRoot(t), "scripts", "hbase", "cluster.sh"), base: 23000}
	if b := os.Getenv("SIMDEX_CLUSTER_PORT_BASE"); b != "" {
		n, err := strconv.Atoi(b)
		if err != nil {
			t.Fatalf("SIMDEX_CLUSTER_PORT_BASE %q: %v", b, err)
		}
		c.base = n
	}
	if got := strings.TrimSpace(c.run(t, "zk")); got != zk {
		t.Fatalf("cluster.sh (with this environment) controls the cluster at %s, not %s=%s: set SIMDEX_CLUSTER_PORT_BASE and SIMDEX_CLUSTER_DATA as for its start", got, EnvCluster, zk)
	}
	c.admin = exec.Command(c.script, "admin", "-")
	c.admin.Stderr = &c.errb
	var err error
	if c.in, err = c.admin.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.admin.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewReader(stdout)
	if err := c.admin.Start(); err != nil {
		t.Fatalf("cluster.sh admin: %v", err)
	}
	t.Cleanup(func() {
		c.in.Close() // ClusterAdmin ends at the end of its input
		if err := c.admin.Wait(); err != nil {
			t.Errorf("cluster.sh admin: %v\n%s", err, c.errb.String())
		}
	})
	return c
}

// run runs cluster.sh with args and returns its stdout.
func (c *cluster) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(c.script, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// do sends one command to ClusterAdmin and returns its output lines, or the
// error it reported.
func (c *cluster) do(format string, args ...any) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		return nil, fmt.Errorf("admin %q: %w", line, err)
	}
	var out []string
	for {
		l, err := c.out.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("admin %q: %w (stderr: %s)", line, err, c.errb.String())
		}
		l = strings.TrimRight(l, "\n")
		switch {
		case l == "ok":
			return out, nil
		case strings.HasPrefix(l, "err "):
			return out, fmt.Errorf("admin %q: %s", line, l[4:])
		}
		out = append(out, l)
	}
}

// must is do that fails the test on an error.
func (c *cluster) must(t *testing.T, format string, args ...any) []string {
	t.Helper()
	out, err := c.do(format, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// regionLoc is one region as ClusterAdmin's regions command lists it.
type regionLoc struct {
	encoded, server string
	start, end      string // hex, "-" for empty
}

func (c *cluster) regions(t *testing.T, table string) []regionLoc {
	t.Helper()
	var rs []regionLoc
	for _, l := range c.must(t, "regions %s", table) {
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf("regions %s: line %q", table, l)
		}
		rs = append(rs, regionLoc{encoded: f[0], server: f[1], start: f[2], end: f[3]})
	}
	return rs
}

// status is the cluster as the active master reports it.
type status struct {
	master  string
	backups []string
	servers map[string]int // region server name -> regions it holds
}

func (c *cluster) status() (status, error) {
	lines, err := c.do("status")
	st := status{servers: map[string]int{}}
	if err != nil {
		return st, err
	}
	for _, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "master":
			st.master = f[1]
		case len(f) == 2 && f[0] == "backup":
			st.backups = append(st.backups, f[1])
		case len(f) == 3 && f[0] == "server":
			n, _ := strconv.Atoi(f[2])
			st.servers[f[1]] = n
		}
	}
	return st, nil
}

// role names the cluster.sh process serving at a server name
// (host,port,startcode), from its port.
func (c *cluster) role(server string) string {
	f := strings.Split(server, ",")
	if len(f) < 2 {
		return ""
	}
	port, err := strconv.Atoi(f[1])
	if err != nil {
		return ""
	}
	switch off := port - c.base; {
	case off == 100 || off == 101:
		return fmt.Sprintf("master%d", off-99)
	case off >= 120 && off <= 122:
		return fmt.Sprintf("rs%d", off-119)
	}
	return ""
}

// waitServers waits until the master reports n live region servers (and,
// with backup, a backup master).
func (c *cluster) waitServers(t *testing.T, n int, backup bool, within time.Duration) status {
	t.Helper()
	var st status
	var err error
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(time.Second) {
		st, err = c.status()
		if err == nil && len(st.servers) == n && (!backup || len(st.backups) > 0) {
			return st
		}
	}
	t.Fatalf("cluster: not %d live region servers (backup master: %v) within %v: %+v, %v", n, backup, within, st, err)
	return st
}

// waitAssigned waits until every region of table is on a live region server
// other than avoid.
func (c *cluster) waitAssigned(t *testing.T, table, avoid string, within time.Duration) []regionLoc {
	t.Helper()
	var rs []regionLoc
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(time.Second) {
		st, err := c.status()
		if err != nil {
			continue
		}
		out, err := c.do("regions %s", table)
		if err != nil {
			continue
		}
		rs = rs[:0]
		ok := true
		for _, l := range out {
			f := strings.Fields(l)
			if len(f) != 4 {
				t.Fatalf("regions %s: line %q", table, l)
			}
			r := regionLoc{encoded: f[0], server: f[1], start: f[2], end: f[3]}
			rs = append(rs, r)
			if _, live := st.servers[r.server]; !live || r.server == avoid {
				ok = false
			}
		}
		if ok && len(rs) > 0 {
			return rs
		}
	}
	t.Fatalf("cluster: regions of %s not all on live servers (avoiding %s) within %v: %+v", table, avoid, within, rs)
	return nil
}
