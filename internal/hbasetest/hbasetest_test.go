package hbasetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
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
// one the tests talk to: its ZooKeeper names an active master (the client
// reads /hbase/master to reach it), and that master answers with HBase's
// two built-in namespaces.
func TestHBaseRegistered(t *testing.T) {
	addr := ZK(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{addr}})
	if err != nil {
		t.Fatalf("hbase client for %s: %v", addr, err)
	}
	defer c.Close()
	ns, err := c.Namespaces(ctx)
	if err != nil {
		t.Fatalf("namespaces from the master that %s names: %v", addr, err)
	}
	for _, want := range []string{"default", "hbase"} {
		if !slices.Contains(ns, want) {
			t.Fatalf("namespaces %v: no %q", ns, want)
		}
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
