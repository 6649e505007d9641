package hbasetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name, zk, ci string
		wantAddr     string
		wantFail     bool
		wantSkip     bool
	}{
		{name: "set", zk: "127.0.0.1:22281", wantAddr: "127.0.0.1:22281"},
		{name: "set under CI", zk: "127.0.0.1:22281", ci: "true", wantAddr: "127.0.0.1:22281"},
		{name: "unset locally skips", wantSkip: true},
		{name: "unset with CI=false skips", ci: "false", wantSkip: true},
		{name: "unset under CI fails", ci: "true", wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr, reason, fail := decide(tc.zk, tc.ci)
			if addr != tc.wantAddr || fail != tc.wantFail {
				t.Fatalf("decide(%q,%q) = %q, fail=%v; want %q, fail=%v", tc.zk, tc.ci, addr, fail, tc.wantAddr, tc.wantFail)
			}
			if (tc.wantSkip || tc.wantFail) && reason == "" {
				t.Fatalf("decide(%q,%q): no reason given", tc.zk, tc.ci)
			}
		})
	}
}

// TestHBaseRegistered checks the HBase that scripts/test.sh started is the
// one the tests talk to: its ZooKeeper holds an active master znode in the
// serialized form (magic 0xFF, id length, id, "PBUF", protobuf).
func TestHBaseRegistered(t *testing.T) {
	addr := ZK(t)
	conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatalf("zk connect %s: %v", addr, err)
	}
	defer conn.Close()
	data, _, err := conn.Get("/hbase/master")
	if err != nil {
		t.Fatalf("zk get /hbase/master at %s: %v", addr, err)
	}
	if len(data) < 9 || data[0] != 0xFF {
		t.Fatalf("/hbase/master: not a serialized HBase znode: % x", data)
	}
	idLen := int(data[1])<<24 | int(data[2])<<16 | int(data[3])<<8 | int(data[4])
	if 5+idLen+4 > len(data) || !bytes.Equal(data[5+idLen:5+idLen+4], []byte("PBUF")) {
		t.Fatalf("/hbase/master: no PBUF marker after id of %d bytes: % x", idLen, data)
	}
}

func TestClasspathFile(t *testing.T) {
	tests := []struct{ version, want string }{
		{"", "/h/cp.txt"},
		{"2.6.4", "/h/cp.txt"},
		{"2.5.11", "/h/cp-2.5.11.txt"},
		{"3.0.0-alpha-4", "/h/cp-3.0.0-alpha-4.txt"},
	}
	for _, tc := range tests {
		if got := ClasspathFile("/h", tc.version); got != tc.want {
			t.Errorf("ClasspathFile(/h, %q) = %q, want %q", tc.version, got, tc.want)
		}
	}
}

func TestPrivatePorts(t *testing.T) {
	tests := []struct {
		env        string
		want       [3]int
		wantSuffix string
		wantErr    bool
	}{
		{env: "", want: [3]int{22381, 26200, 26220}},
		{env: "22681,26600,26620", want: [3]int{22681, 26600, 26620}, wantSuffix: "-22681"},
		{env: " 22681, 26600 ,26620", want: [3]int{22681, 26600, 26620}, wantSuffix: "-22681"},
		{env: "22681,26600", wantErr: true},
		{env: "22681,26600,x", wantErr: true},
		{env: "22681,0,26620", wantErr: true},
		{env: "22681,26600,70000", wantErr: true},
	}
	for _, tc := range tests {
		got, suffix, err := privatePorts(tc.env, 22381, 26200, 26220)
		if (err != nil) != tc.wantErr {
			t.Errorf("privatePorts(%q): err = %v, want error %v", tc.env, err, tc.wantErr)
			continue
		}
		if err == nil && (got != tc.want || suffix != tc.wantSuffix) {
			t.Errorf("privatePorts(%q) = %v, %q; want %v, %q", tc.env, got, suffix, tc.want, tc.wantSuffix)
		}
	}
}
