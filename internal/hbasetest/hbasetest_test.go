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
